import type { AnswerTranslator } from './types.js';

/**
 * Two answer translators in a row (provider → Chat, then Chat → client),
 * for two formats neither of which is Chat. Bytes flow through both as they
 * come; nothing is buffered beyond what each holds of its current event.
 */
export function chainAnswers(first: AnswerTranslator, second: AnswerTranslator): AnswerTranslator {
  return {
    json: (body) => second.json(first.json(body)),
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
}
