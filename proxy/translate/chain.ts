import type { AnswerTranslator, ChatChunkReader, ChatChunkStream } from './types.js';

/**
 * Two answer translators in a row (provider → Chat, then Chat → client),
 * for two formats neither of which is Chat. Bytes flow through both as they
 * come; nothing is buffered beyond what each holds of its current event.
 * When both hops can (`chatChunks`, `fromChatChunks`), a stream's Chat
 * chunks pass between them as objects: writing them as SSE and parsing them
 * back was nearly half of what a two-hop event cost. A whole answer likewise
 * (`chatJson`, `fromChatJson`): the Chat completion between the hops is an
 * object, never text written and parsed again.
 */
export function chainAnswers(first: AnswerTranslator, second: AnswerTranslator): AnswerTranslator {
  // Called as methods: a translator may be a class instance.
  const byObjects = first.chatJson !== undefined && second.fromChatJson !== undefined;
  const chained: AnswerTranslator = {
    json: byObjects ? (body) => second.fromChatJson!(first.chatJson!(body)) : (body) => second.json(first.json(body)),
    push: (chunk) => second.push(first.push(chunk)),
    end(): Buffer {
      const rest = second.push(first.end());
      return Buffer.concat([rest, second.end()]);
    },
    // A break is the client's format's failure event; the first hop's partial state does not matter any more.
    fail: (message) => second.fail(message),
    error: (status, body) => second.error(status, first.error(status, body)),
    dropped: () => [...new Set([...first.dropped(), ...second.dropped()])],
  };
  if (first.chatChunks === undefined || second.fromChatChunks === undefined) return chained;
  const reader: ChatChunkReader = second.fromChatChunks();
  let stream: ChatChunkStream | undefined;
  // Made on the first streamed bytes: a JSON answer never needs it.
  const chunks = () => (stream ??= first.chatChunks!((chunk) => reader.chunk(chunk)));
  return {
    ...chained,
    push(chunk) {
      chunks().push(chunk);
      return reader.take();
    },
    end() {
      chunks().end();
      reader.end();
      return reader.take();
    },
    fail(message) {
      reader.fail(message);
      return reader.take();
    },
  };
}
