import { randomUUID } from 'node:crypto';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ParsedCall } from '../../call.js';
import type { AnswerTranslator } from '../types.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Chat Completions provider's answer → the Messages answer its client
 * expects: the whole JSON body, the stream event by event, and errors.
 */

type Json = Record<string, unknown>;

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Chat usage → Messages usage: cached prompt tokens are reported apart from the rest, as Anthropic does. */
function messagesUsage(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cached = count(details.cached_tokens);
  return {
    input_tokens: Math.max(0, count(usage.prompt_tokens) - cached),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: count(usage.completion_tokens),
  };
}

/**
 * finish_reason → stop_reason. A plain `stop` is a stop sequence only when the
 * provider says which one matched (vLLM's `stop_reason`); OpenAI does not, so
 * there it reads as end_turn. A provider that calls tools yet says `stop`
 * (some local servers do) still means tool_use.
 */
function stopReason(
  finish: unknown,
  matched: unknown,
  stopSequences: readonly string[],
  calledTools: boolean,
): { stop_reason: string; stop_sequence: string | null } {
  switch (finish) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      if (calledTools) return { stop_reason: 'tool_use', stop_sequence: null };
      if (typeof matched === 'string' && stopSequences.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
      return { stop_reason: 'end_turn', stop_sequence: null };
  }
}

/** A tool call's arguments: a JSON object as the provider wrote it, or `{}` when it wrote something else. */
function toolInput(args: unknown): Json {
  if (typeof args !== 'string' || args === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function messageId(chatId: unknown): string {
  return typeof chatId === 'string' && chatId !== '' ? `msg_${chatId.replace(/^chatcmpl-/, '')}` : `msg_${randomUUID().replace(/-/g, '')}`;
}

/** A tool call's id as the provider gave it; one is made when it gave none, since a tool_result must name it. */
function toolUseId(id: unknown): string {
  return typeof id === 'string' && id ? id : `toolu_${randomUUID().replace(/-/g, '')}`;
}

/** The text of a Chat message's content: a string, or (from some servers) an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) if (isObject(part) && typeof part.text === 'string') out += part.text;
  return out;
}

/** The status → Anthropic error type a Messages client's SDK maps to its error classes. */
function messagesErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** The provider's own error message, from an OpenAI-shaped body (or a bare `message`), if it gave one. */
function providerMessage(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string' && error) return error;
  if (isObject(error) && typeof error.message === 'string' && error.message) return error.message;
  return typeof body.message === 'string' && body.message ? body.message : undefined;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorJson(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

/** A provider error answer (any status ≥ 300) → the Messages error body, keeping the provider's message. */
function messagesError(status: number, body: Buffer): Buffer {
  const message = providerMessage(parse(body.toString('utf8'))) ?? `The model provider answered with status ${status}.`;
  return Buffer.from(errorJson(messagesErrorType(status), message));
}

/** OpenAI's error types met inside a stream → Anthropic's. */
const STREAM_ERROR_TYPES: Record<string, string> = {
  invalid_request_error: 'invalid_request_error',
  rate_limit_error: 'rate_limit_error',
  rate_limit_exceeded: 'rate_limit_error',
  server_error: 'api_error',
  overloaded_error: 'overloaded_error',
};

function stopSequencesOf(call: ParsedCall): string[] {
  const s = call.body.stop_sequences;
  return Array.isArray(s) ? s.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * The reasoning some Chat servers send beside the answer (`reasoning_content`
 * from DeepSeek, vLLM and others; `reasoning` from OpenRouter and Ollama): a
 * Messages thinking block must carry Anthropic's signature, which no Chat
 * provider can give, so it is dropped and its field named.
 */
function noteReasoning(from: Json, dropped: Set<string>): void {
  for (const key of ['reasoning_content', 'reasoning']) {
    const v = from[key];
    if ((typeof v === 'string' && v !== '') || isObject(v)) dropped.add(key);
  }
}

/** A whole Chat completion → a Messages message, its `model` the alias the client asked for. */
function messagesJson(call: ParsedCall, body: Buffer, dropped: Set<string>): Buffer {
  const completion = parse(body.toString('utf8'));
  if (!isObject(completion) || !Array.isArray(completion.choices)) {
    // Some servers report errors with a 200; the status is sent by now, so the body says it.
    const message = providerMessage(completion) ?? 'The model provider sent an answer that is not a chat completion.';
    return Buffer.from(errorJson('api_error', message));
  }
  const choice: Json = isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message: Json = isObject(choice.message) ? choice.message : {};
  noteReasoning(message, dropped);
  const content: Json[] = [];
  const text = contentText(message.content);
  if (text) content.push({ type: 'text', text });
  const refusal = typeof message.refusal === 'string' && message.refusal ? message.refusal : undefined;
  if (refusal) content.push({ type: 'text', text: refusal });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  for (const c of calls) {
    if (!isObject(c) || !isObject(c.function)) continue;
    content.push({ type: 'tool_use', id: toolUseId(c.id), name: c.function.name, input: toolInput(c.function.arguments) });
  }
  const stop = refusal
    ? { stop_reason: 'refusal', stop_sequence: null }
    : stopReason(choice.finish_reason, choice.stop_reason, stopSequencesOf(call), calls.length > 0);
  return Buffer.from(
    JSON.stringify({
      id: messageId(completion.id),
      type: 'message',
      role: 'assistant',
      model: call.alias,
      content,
      ...stop,
      usage: messagesUsage(completion.usage),
    }),
  );
}

function frame(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The event sent once per provider chunk, written by hand: only its text needs escaping. */
function deltaFrame(index: number, type: 'text_delta' | 'input_json_delta', field: 'text' | 'partial_json', value: string): string {
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${field}":${JSON.stringify(value)}}}\n\n`;
}

const EMPTY = Buffer.alloc(0);
const PING = frame('ping', { type: 'ping' });
const MESSAGE_STOP = frame('message_stop', { type: 'message_stop' });

/**
 * A Chat Completions stream → the Messages event sequence, one provider chunk
 * at a time: message_start on the first chunk, a content block per run of
 * text and per tool call (its argument fragments as input_json_delta), and
 * message_delta + message_stop once the provider is done. Chat streams report
 * usage only in their last chunk, so message_start says 0 input tokens and
 * message_delta carries the real input and output counts (the SDKs take both
 * from there). Billing is unaffected: the proxy reads the provider's own
 * usage chunk, not this translation.
 */
class ChatStreamTranslator implements AnswerTranslator {
  private readonly parser: EventSourceParser;
  private readonly decoder = new TextDecoder();
  private readonly stopSequences: string[];
  private out: string[] = [];
  private started = false;
  private ended = false;
  private blocks = 0;
  /** The open content block: its index, and the tool call it holds (-1 for text). */
  private open: { index: number; call: number } | undefined;
  /** Chat tool call index → Messages content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: unknown;
  private matched: unknown;
  private refused = false;
  private usage: unknown;
  private readonly droppedNames = new Set<string>();

  constructor(private readonly call: ParsedCall) {
    this.stopSequences = stopSequencesOf(call);
    this.parser = createParser({ onEvent: (e) => this.onData(e.data) });
  }

  json(body: Buffer): Buffer {
    return messagesJson(this.call, body, this.droppedNames);
  }

  dropped(): string[] {
    return [...this.droppedNames];
  }

  error(status: number, body: Buffer): Buffer {
    return messagesError(status, body);
  }

  push(chunk: Buffer): Buffer {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.flush();
  }

  end(): Buffer {
    if (!this.ended) {
      if (this.finish !== undefined) this.close();
      else this.failWith('api_error', 'The model provider ended the answer before it finished.');
    }
    return this.flush();
  }

  fail(message: string): Buffer {
    if (!this.ended) this.failWith('api_error', message);
    return this.flush();
  }

  private flush(): Buffer {
    if (this.out.length === 0) return EMPTY;
    const text = this.out.length === 1 ? this.out[0]! : this.out.join('');
    this.out = [];
    return Buffer.from(text);
  }

  private failWith(type: string, message: string): void {
    this.ended = true;
    this.out.push(frame('error', { type: 'error', error: { type, message } }));
  }

  private onData(data: string): void {
    if (this.ended) return;
    if (data === '[DONE]') {
      this.close();
      return;
    }
    const chunk = parse(data);
    if (!isObject(chunk)) return;
    if (chunk.error !== undefined) {
      const error = isObject(chunk.error) ? chunk.error : {};
      const type = typeof error.type === 'string' ? STREAM_ERROR_TYPES[error.type] : undefined;
      this.failWith(type ?? 'api_error', providerMessage(chunk) ?? 'The model provider reported an error mid-answer.');
      return;
    }
    if (!this.started) this.start(chunk.id);
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    noteReasoning(delta, this.droppedNames);
    if (typeof delta.content === 'string' && delta.content) this.text(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal) {
      this.refused = true;
      this.text(delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) for (const c of delta.tool_calls) if (isObject(c)) this.toolCall(c);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.finish = choice.finish_reason;
      this.matched = choice.stop_reason;
      this.closeBlock();
    }
  }

  private start(chatId: unknown): void {
    this.started = true;
    const message = {
      id: messageId(chatId),
      type: 'message',
      role: 'assistant',
      model: this.call.alias,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    };
    this.out.push(frame('message_start', { type: 'message_start', message }), PING);
  }

  private openBlock(call: number, block: Json): number {
    this.closeBlock();
    const index = this.blocks++;
    this.open = { index, call };
    this.out.push(frame('content_block_start', { type: 'content_block_start', index, content_block: block }));
    return index;
  }

  private closeBlock(): void {
    if (!this.open) return;
    this.out.push(frame('content_block_stop', { type: 'content_block_stop', index: this.open.index }));
    this.open = undefined;
  }

  private text(text: string): void {
    const index = this.open?.call === -1 ? this.open.index : this.openBlock(-1, { type: 'text', text: '' });
    this.out.push(deltaFrame(index, 'text_delta', 'text', text));
  }

  private toolCall(c: Json): void {
    const call = typeof c.index === 'number' ? c.index : 0;
    const fn = isObject(c.function) ? c.function : {};
    let index = this.toolBlocks.get(call);
    if (index === undefined) {
      index = this.openBlock(call, { type: 'tool_use', id: toolUseId(c.id), name: typeof fn.name === 'string' ? fn.name : '', input: {} });
      this.toolBlocks.set(call, index);
    }
    if (typeof fn.arguments === 'string' && fn.arguments) {
      this.out.push(deltaFrame(index, 'input_json_delta', 'partial_json', fn.arguments));
    }
  }

  /** The provider is done: the last block closes, then message_delta (stop reason, usage) and message_stop. */
  private close(): void {
    if (!this.started) this.start(undefined);
    this.closeBlock();
    this.ended = true;
    const stop = this.refused
      ? { stop_reason: 'refusal', stop_sequence: null }
      : stopReason(this.finish, this.matched, this.stopSequences, this.toolBlocks.size > 0);
    this.out.push(frame('message_delta', { type: 'message_delta', delta: stop, usage: messagesUsage(this.usage) }), MESSAGE_STOP);
  }
}

export function createChatAnswerTranslator(call: ParsedCall): AnswerTranslator {
  return new ChatStreamTranslator(call);
}
