import { isObject } from '../../../shared/json.js';

/**
 * A Messages provider's answer → what a Chat Completions client expects: the
 * whole message and error bodies (the event stream is stream-to-chat.ts).
 */

type Json = Record<string, unknown>;

export function count(v: unknown): number {
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

export function finishReason(stop: unknown): string {
  return (typeof stop === 'string' && FINISH_REASONS[stop]) || 'stop';
}

export interface Tokens {
  input: number;
  cacheCreation: number;
  cacheRead: number;
  output: number;
}

/** Messages counts cached prompt tokens apart; Chat Completions counts them in the prompt and names the cached share. */
export function chatUsageText(t: Tokens): string {
  const prompt = t.input + t.cacheCreation + t.cacheRead;
  return `{"prompt_tokens":${prompt},"completion_tokens":${t.output},"total_tokens":${prompt + t.output},"prompt_tokens_details":{"cached_tokens":${t.cacheRead}}}`;
}

/** `chatUsageText` as the object it reads back as. */
function chatUsageObject(t: Tokens): Json {
  const prompt = t.input + t.cacheCreation + t.cacheRead;
  return {
    prompt_tokens: prompt,
    completion_tokens: t.output,
    total_tokens: prompt + t.output,
    prompt_tokens_details: { cached_tokens: t.cacheRead },
  };
}

export function readTokens(u: unknown, into: Tokens): void {
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
function chatErrorObject(error: unknown, status: number, fallback: string): Json {
  const e = isObject(error) ? error : {};
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : fallback;
  const [type, code] = (typeof e.type === 'string' && ERROR_TYPES[e.type]) || [typeForStatus(status), null];
  return { error: { message, type, param: null, code } };
}

export function chatError(error: unknown, status: number, fallback: string): string {
  return JSON.stringify(chatErrorObject(error, status, fallback));
}

export function errorFromBody(status: number, body: Buffer): Buffer {
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
export function noteBlock(block: Json, dropped: Set<string>): void {
  if (block.type !== 'text' && block.type !== 'tool_use') dropped.add(`content[${String(block.type)}]`);
}

const NOT_JSON = 'The model provider sent an answer that is not JSON.';

/** What a whole Messages answer says, read once for either way of writing the Chat completion. */
interface Answer {
  id: unknown;
  message: Json;
  finish: string;
  tokens: Tokens;
}

function readAnswer(body: Buffer, dropped: Set<string>): Answer | undefined {
  let m: unknown;
  try {
    m = JSON.parse(body.toString('utf8'));
  } catch {
    m = undefined;
  }
  if (!isObject(m)) return undefined;
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
  return { id: m.id ?? '', message, finish: finishReason(m.stop_reason), tokens };
}

/** A whole Messages answer → the Chat completion's bytes (the usage written by hand, as on the stream). */
export function jsonAnswer(body: Buffer, alias: string, created: number, dropped: Set<string>): Buffer {
  const a = readAnswer(body, dropped);
  if (a === undefined) return Buffer.from(chatError(undefined, 502, NOT_JSON));
  const out =
    `{"id":${JSON.stringify(a.id)},"object":"chat.completion","created":${created},"model":${JSON.stringify(alias)},` +
    `"choices":[{"index":0,"message":${JSON.stringify(a.message)},"logprobs":null,"finish_reason":"${a.finish}"}],` +
    `"usage":${chatUsageText(a.tokens)}}`;
  return Buffer.from(out);
}

/**
 * The same Chat completion as an object, for a second hop (chain.ts). Its
 * fields are what `JSON.parse` of `jsonAnswer` gives but for tool call keys
 * left undefined (no id or name from the provider), which JSON omits: the
 * Chat readers treat the two alike.
 */
export function chatCompletion(body: Buffer, alias: string, created: number, dropped: Set<string>): Json {
  const a = readAnswer(body, dropped);
  if (a === undefined) return chatErrorObject(undefined, 502, NOT_JSON);
  return {
    id: a.id,
    object: 'chat.completion',
    created,
    model: alias,
    choices: [{ index: 0, message: a.message, logprobs: null, finish_reason: a.finish }],
    usage: chatUsageObject(a.tokens),
  };
}
