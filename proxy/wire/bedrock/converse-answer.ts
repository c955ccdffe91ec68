import { randomUUID } from 'node:crypto';
import { isObject, type JsonObject } from '../../../shared/json.js';
import { createEventStreamReader, MalformedEventStream, type EventStreamMessage } from './event-stream.js';

/**
 * Converse's answers as Chat Completions answers, the pivot every client
 * format translates from: a whole answer (`output.message.content[]`) as a
 * completion, ConverseStream's events as completion chunks ending on the
 * usage chunk and `[DONE]`. Usage keeps what Bedrock counts apart apart:
 * `prompt_tokens` is all the input, of which `cached_tokens` were read from
 * the cache and `cache_write_tokens` written to it (the Chat usage reader
 * bills each at its price).
 */

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
};

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Converse's `usage` → Chat's. Counts that are not numbers are passed on as they came, so the usage reader sees them malformed. */
export function chatUsageOf(u: JsonObject): JsonObject {
  const read = count(u.cacheReadInputTokens);
  const write = count(u.cacheWriteInputTokens);
  const input = typeof u.inputTokens === 'number' ? u.inputTokens + read + write : u.inputTokens;
  const output = u.outputTokens;
  const total = typeof input === 'number' && typeof output === 'number' ? input + output : undefined;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: total,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
}

function finishOf(stopReason: unknown): string {
  return (typeof stopReason === 'string' && FINISH[stopReason]) || 'stop';
}

/** A whole Converse answer → a Chat completion. */
export function chatFromConverse(answer: JsonObject, model: string): JsonObject {
  const message = isObject(answer.output) && isObject(answer.output.message) ? answer.output.message : {};
  const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  const text = blocks.map((b) => (typeof b.text === 'string' ? b.text : '')).join('');
  const calls = blocks
    .filter((b): b is JsonObject & { toolUse: JsonObject } => isObject(b.toolUse))
    .map((b) => ({
      id: b.toolUse.toolUseId,
      type: 'function',
      function: { name: b.toolUse.name, arguments: JSON.stringify(b.toolUse.input ?? {}) },
    }));
  const chatMessage: JsonObject = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) chatMessage.tool_calls = calls;
  const out: JsonObject = {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: chatMessage, finish_reason: finishOf(answer.stopReason) }],
  };
  if (isObject(answer.usage)) out.usage = chatUsageOf(answer.usage);
  return out;
}

function payloadOf(m: EventStreamMessage): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength).toString('utf8'));
  } catch {
    throw new MalformedEventStream('a Converse event is not JSON');
  }
  if (!isObject(value)) throw new MalformedEventStream('a Converse event is not a JSON object');
  return value;
}

export interface ConverseDecoder {
  /** The Chat text this chunk of the answer completes; throws `MalformedEventStream`. */
  push(chunk: Uint8Array): string;
  /** What is left at the answer's end (a whole answer is all of it); throws when the answer stopped inside a message. */
  end(): string;
}

/** Tool blocks get Chat's tool call indexes in the order they start. */
function streamState(model: string) {
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const toolIndex = new Map<unknown, number>();
  const chunk = (choices: unknown[], extra: JsonObject = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
  const delta = (d: JsonObject, finish: string | null = null) => chunk([{ index: 0, delta: d, finish_reason: finish }]);
  return { toolIndex, chunk, delta };
}

function eventText(type: string | undefined, p: JsonObject, s: ReturnType<typeof streamState>): string {
  switch (type) {
    case 'messageStart':
      return s.delta({ role: 'assistant', content: '' });
    case 'contentBlockStart': {
      const use = isObject(p.start) && isObject(p.start.toolUse) ? p.start.toolUse : undefined;
      if (!use) return '';
      const index = s.toolIndex.size;
      s.toolIndex.set(p.contentBlockIndex, index);
      return s.delta({ tool_calls: [{ index, id: use.toolUseId, type: 'function', function: { name: use.name, arguments: '' } }] });
    }
    case 'contentBlockDelta': {
      const d = isObject(p.delta) ? p.delta : {};
      if (typeof d.text === 'string') return s.delta({ content: d.text });
      if (isObject(d.toolUse) && typeof d.toolUse.input === 'string')
        return s.delta({ tool_calls: [{ index: s.toolIndex.get(p.contentBlockIndex) ?? 0, function: { arguments: d.toolUse.input } }] });
      return '';
    }
    case 'messageStop':
      return s.delta({}, finishOf(p.stopReason));
    case 'metadata':
      return isObject(p.usage) ? `${s.chunk([], { usage: chatUsageOf(p.usage) })}data: [DONE]\n\n` : 'data: [DONE]\n\n';
    default:
      return '';
  }
}

/** An exception in the stream → the error chunk an OpenAI stream ends on. */
function failureText(m: EventStreamMessage): string {
  const exception = m.headers[':exception-type'] ?? m.headers[':error-code'] ?? 'internalServerException';
  let message = m.headers[':error-message'] ?? `Bedrock reported ${exception}.`;
  if (m.headers[':message-type'] === 'exception') {
    const body = payloadOf(m);
    if (typeof body.message === 'string') message = body.message;
  }
  const type = exception === 'throttlingException' ? 'rate_limit_error' : 'api_error';
  return `data: ${JSON.stringify({ error: { message, type } })}\n\n`;
}

/** ConverseStream's binary event stream → Chat SSE. */
export function createConverseStreamDecoder(model: string): ConverseDecoder {
  const reader = createEventStreamReader();
  const state = streamState(model);
  return {
    push(chunk) {
      let out = '';
      for (const m of reader.push(chunk)) {
        const kind = m.headers[':message-type'];
        if (kind === 'event') out += eventText(m.headers[':event-type'], payloadOf(m), state);
        else if (kind === 'exception' || kind === 'error') out += failureText(m);
        else throw new MalformedEventStream(`a message of type ${kind ?? '(none)'}`);
      }
      return out;
    },
    end() {
      reader.end();
      return '';
    },
  };
}

/** A whole Converse answer, gathered, → a Chat completion at its end. */
export function createConverseJsonDecoder(model: string): ConverseDecoder {
  const parts: Uint8Array[] = [];
  return {
    push(chunk) {
      parts.push(chunk);
      return '';
    },
    end() {
      let answer: unknown;
      try {
        answer = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        throw new MalformedEventStream('a Converse answer is not JSON');
      }
      if (!isObject(answer)) throw new MalformedEventStream('a Converse answer is not a JSON object');
      return JSON.stringify(chatFromConverse(answer, model));
    },
  };
}
