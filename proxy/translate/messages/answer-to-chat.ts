import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { AnswerTranslator } from '../types.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Messages provider's answer → what a Chat Completions client expects: the
 * whole message, the event stream (one event in, at most one chunk out, so
 * nothing waits on anything but the current event), and error bodies.
 */

type Json = Record<string, unknown>;

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Stop reason → finish reason; unknown ones (a newer API's) end the turn normally. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

function finishReason(stop: unknown): string {
  return (typeof stop === 'string' && FINISH_REASONS[stop]) || 'stop';
}

interface Tokens {
  input: number;
  cacheCreation: number;
  cacheRead: number;
  output: number;
}

/** Messages counts cached prompt tokens apart; Chat Completions counts them in the prompt and names the cached share. */
function chatUsage(t: Tokens): string {
  const prompt = t.input + t.cacheCreation + t.cacheRead;
  return `{"prompt_tokens":${prompt},"completion_tokens":${t.output},"total_tokens":${prompt + t.output},"prompt_tokens_details":{"cached_tokens":${t.cacheRead}}}`;
}

function readTokens(u: unknown, into: Tokens): void {
  if (!isObject(u)) return;
  if (u.input_tokens !== undefined) into.input = count(u.input_tokens);
  if (u.cache_creation_input_tokens !== undefined) into.cacheCreation = count(u.cache_creation_input_tokens);
  if (u.cache_read_input_tokens !== undefined) into.cacheRead = count(u.cache_read_input_tokens);
  if (u.output_tokens !== undefined) into.output = count(u.output_tokens);
}

/** Messages error type → the Chat Completions type and code a client's SDK expects for it. */
const ERROR_TYPES: Record<string, [type: string, code: string | null]> = {
  invalid_request_error: ['invalid_request_error', null],
  authentication_error: ['invalid_request_error', 'invalid_api_key'],
  permission_error: ['permission_error', null],
  not_found_error: ['invalid_request_error', 'not_found'],
  request_too_large: ['invalid_request_error', 'request_too_large'],
  rate_limit_error: ['rate_limit_error', 'rate_limit_exceeded'],
  billing_error: ['insufficient_quota', 'insufficient_quota'],
  api_error: ['server_error', null],
  overloaded_error: ['server_error', 'overloaded'],
  timeout_error: ['server_error', 'timeout'],
};

function typeForStatus(status: number): string {
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** `{"error":{message,type,param,code}}` from a Messages error object (or none). */
function chatError(error: unknown, status: number, fallback: string): string {
  const e = isObject(error) ? error : {};
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : fallback;
  const [type, code] = (typeof e.type === 'string' && ERROR_TYPES[e.type]) || [typeForStatus(status), null];
  return JSON.stringify({ error: { message, type, param: null, code } });
}

function errorFromBody(status: number, body: Buffer): Buffer {
  let error: unknown;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (isObject(parsed)) error = parsed.error;
  } catch {
    /* not JSON: the status says what kind of failure it was */
  }
  return Buffer.from(chatError(error, status, `The model provider answered with status ${status}.`));
}

function toolCall(block: Json): Json {
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } };
}

/**
 * Blocks a Chat message has no place for, named `content[<type>]`: thinking
 * (Chat has no reasoning in its answer) and the calls and results of
 * Anthropic's server tools (the text built on them is kept).
 */
function noteBlock(block: Json, dropped: Set<string>): void {
  if (block.type !== 'text' && block.type !== 'tool_use') dropped.add(`content[${String(block.type)}]`);
}

function jsonAnswer(body: Buffer, alias: string, created: number, dropped: Set<string>): Buffer {
  let m: unknown;
  try {
    m = JSON.parse(body.toString('utf8'));
  } catch {
    m = undefined;
  }
  if (!isObject(m)) return Buffer.from(chatError(undefined, 502, 'The model provider sent an answer that is not JSON.'));
  let text: string | null = null;
  const calls: Json[] = [];
  for (const block of Array.isArray(m.content) ? m.content : []) {
    if (!isObject(block)) continue;
    noteBlock(block, dropped);
    if (block.type === 'text' && typeof block.text === 'string') text = (text ?? '') + block.text;
    else if (block.type === 'tool_use') calls.push(toolCall(block));
  }
  const message: Json = { role: 'assistant', content: text, refusal: null };
  if (calls.length) message.tool_calls = calls;
  const tokens: Tokens = { input: 0, cacheCreation: 0, cacheRead: 0, output: 0 };
  readTokens(m.usage, tokens);
  const out =
    `{"id":${JSON.stringify(m.id ?? '')},"object":"chat.completion","created":${created},"model":${JSON.stringify(alias)},` +
    `"choices":[{"index":0,"message":${JSON.stringify(message)},"logprobs":null,"finish_reason":"${finishReason(m.stop_reason)}"}],` +
    `"usage":${chatUsage(tokens)}}`;
  return Buffer.from(out);
}

const DONE = 'data: [DONE]\n\n';

/** One call's stream: Messages events in, chat.completion.chunk frames out. */
class StreamTranslator {
  private readonly parser = createParser({ onEvent: (e) => this.onEvent(e) });
  private readonly decoder = new TextDecoder();
  private out = '';
  /** `data: {"id":…,"model":…,"choices":[{"index":0,"delta":` — fixed once the message's id is known. */
  private head = '';
  private readonly tokens: Tokens = { input: 0, cacheCreation: 0, cacheRead: 0, output: 0 };
  /** Content block index → tool call index, for the blocks that are tool calls. */
  private readonly toolIndex: number[] = [];
  private tools = 0;
  private finished = false;

  constructor(
    private readonly alias: string,
    private readonly created: number,
    private readonly includeUsage: boolean,
    private readonly dropped: Set<string>,
  ) {
    this.setHead('');
  }

  private setHead(id: string): void {
    this.head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.alias)},"choices":[{"index":0,"delta":`;
  }

  private chunk(delta: string, finish = 'null'): void {
    this.out += `${this.head}${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`;
  }

  private fail(error: unknown, status: number, fallback: string): void {
    this.out += `data: ${chatError(error, status, fallback)}\n\n`;
    this.finished = true;
  }

  private onEvent(e: EventSourceMessage): void {
    if (this.finished) return;
    const type = e.event;
    if (type === 'ping') return;
    let data: Json;
    try {
      const parsed = JSON.parse(e.data) as unknown;
      if (!isObject(parsed)) return;
      data = parsed;
    } catch {
      return;
    }
    switch (type ?? data.type) {
      case 'message_start': {
        const m = isObject(data.message) ? data.message : {};
        if (typeof m.id === 'string') this.setHead(m.id);
        readTokens(m.usage, this.tokens);
        this.chunk('{"role":"assistant","content":"","refusal":null}');
        return;
      }
      case 'content_block_start': {
        const block = isObject(data.content_block) ? data.content_block : {};
        noteBlock(block, this.dropped);
        if (block.type === 'tool_use') {
          const index = this.tools++;
          this.toolIndex[count(data.index)] = index;
          this.chunk(
            `{"tool_calls":[{"index":${index},"id":${JSON.stringify(block.id)},"type":"function","function":{"name":${JSON.stringify(block.name)},"arguments":""}}]}`,
          );
        } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          this.chunk(`{"content":${JSON.stringify(block.text)}}`);
        }
        return;
      }
      case 'content_block_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        if (d.type === 'text_delta' && typeof d.text === 'string') this.chunk(`{"content":${JSON.stringify(d.text)}}`);
        else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          const index = this.toolIndex[count(data.index)] ?? 0;
          this.chunk(`{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(d.partial_json)}}}]}`);
        }
        return;
      }
      case 'message_delta': {
        readTokens(data.usage, this.tokens);
        const d = isObject(data.delta) ? data.delta : {};
        if (d.stop_reason !== undefined && d.stop_reason !== null) this.chunk('{}', `"${finishReason(d.stop_reason)}"`);
        return;
      }
      case 'message_stop':
        if (this.includeUsage) {
          const head = this.head.slice(0, this.head.length - '{"index":0,"delta":'.length);
          this.out += `${head}],"usage":${chatUsage(this.tokens)}}\n\n`;
        }
        this.out += DONE;
        this.finished = true;
        return;
      case 'error':
        this.fail(data.error, 500, 'The model provider failed mid-answer.');
        return;
      default:
        // content_block_stop, and event types a newer API may add: nothing to say to a Chat client.
        return;
    }
  }

  push(chunk: Buffer): Buffer {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    const out = this.out;
    if (out === '') return EMPTY;
    this.out = '';
    return Buffer.from(out);
  }

  end(): Buffer {
    // A stream that closes without message_stop was cut short: the client must not take it as complete.
    if (!this.finished) this.fail(undefined, 502, 'The model provider ended the answer early.');
    const out = this.out;
    this.out = '';
    return Buffer.from(out);
  }

  breakOff(message: string): Buffer {
    if (this.finished) return EMPTY;
    this.fail(undefined, 502, message);
    const out = this.out;
    this.out = '';
    return Buffer.from(out);
  }
}

const EMPTY = Buffer.alloc(0);

/** The answer translator for one Chat Completions call served by a Messages provider. */
export function createChatAnswer(alias: string, includeUsage: boolean): AnswerTranslator {
  const created = Math.floor(Date.now() / 1000);
  let stream: StreamTranslator | undefined;
  const dropped = new Set<string>();
  const streamed = () => (stream ??= new StreamTranslator(alias, created, includeUsage, dropped));
  return {
    json: (body) => jsonAnswer(body, alias, created, dropped),
    dropped: () => [...dropped],
    push: (chunk) => streamed().push(chunk),
    end: () => streamed().end(),
    fail: (message) => streamed().breakOff(message),
    error: errorFromBody,
  };
}
