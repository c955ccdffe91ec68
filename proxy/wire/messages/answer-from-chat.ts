import { randomUUID } from 'node:crypto';
import type { ParsedCall } from '../../call.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Chat Completions provider's answer → the Messages answer its client
 * expects: the whole JSON body and errors (the stream, event by event, is
 * stream-from-chat.ts).
 */

type Json = Record<string, unknown>;

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Chat usage → Messages usage: cached prompt tokens are reported apart from the rest, as Anthropic does. */
export function messagesUsageFromChat(u: unknown): Json {
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
export function stopReason(
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

export function messageId(chatId: unknown): string {
  return typeof chatId === 'string' && chatId !== '' ? `msg_${chatId.replace(/^chatcmpl-/, '')}` : `msg_${randomUUID().replace(/-/g, '')}`;
}

/** A tool call's id as the provider gave it; one is made when it gave none, since a tool_result must name it. */
export function toolUseId(id: unknown): string {
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
export function providerMessage(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string' && error) return error;
  if (isObject(error) && typeof error.message === 'string' && error.message) return error.message;
  return typeof body.message === 'string' && body.message ? body.message : undefined;
}

export function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorJson(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

/** How OpenAI-compatible providers say the input is over the context window (OpenAI, Azure, vLLM, llama.cpp, Ollama). */
const CONTEXT_OVERFLOW =
  /context_length_exceeded|maximum context length|exceeds the context window|longer than the maximum model length|exceeds the available context size/i;

/**
 * A context overflow in Anthropic's wording, `prompt is too long: N tokens > M maximum`:
 * Claude Code compacts the conversation on "prompt is too long" (and reads the two
 * numbers) and would otherwise show the error and stop. The provider's own text
 * follows, so nothing it said is lost; a count it did not give is left out.
 */
function anthropicOverflow(message: string): string {
  const limit = /maximum context length is (\d+)/i.exec(message)?.[1];
  const actual = /(?:resulted in|requested|you have) (\d+)/i.exec(message)?.[1];
  const counts = limit !== undefined && actual !== undefined ? ` ${actual} tokens > ${limit} maximum` : '';
  return `prompt is too long:${counts} (${message})`;
}

/** A provider error answer (any status ≥ 300) → the Messages error body, keeping the provider's message. */
export function messagesError(status: number, body: Buffer): Buffer {
  const parsed = parse(body.toString('utf8'));
  const message = providerMessage(parsed) ?? `The model provider answered with status ${status}.`;
  const code = isObject(parsed) && isObject(parsed.error) ? parsed.error.code : undefined;
  if (status === 400 && (code === 'context_length_exceeded' || CONTEXT_OVERFLOW.test(message))) {
    return Buffer.from(errorJson('invalid_request_error', anthropicOverflow(message)));
  }
  return Buffer.from(errorJson(messagesErrorType(status), message));
}

export function stopSequencesOf(call: ParsedCall): string[] {
  const s = call.body.stop_sequences;
  return Array.isArray(s) ? s.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * The reasoning some Chat servers send beside the answer (`reasoning_content`
 * from DeepSeek, vLLM and others; `reasoning` from OpenRouter and Ollama): a
 * Messages thinking block must carry Anthropic's signature, which no Chat
 * provider can give, so it is dropped and its field named.
 */
export function noteReasoning(from: Json, dropped: Set<string>): void {
  for (const key of ['reasoning_content', 'reasoning']) {
    const v = from[key];
    if ((typeof v === 'string' && v !== '') || isObject(v)) dropped.add(key);
  }
}

/** A whole Chat completion → a Messages message, its `model` the alias the client asked for. */
export function messagesJson(call: ParsedCall, body: Buffer, dropped: Set<string>): Buffer {
  return messagesJsonOf(call, parse(body.toString('utf8')), dropped);
}

/** `messagesJson` of the completion already parsed (or handed over as an object by a first hop, chain.ts). */
export function messagesJsonOf(call: ParsedCall, completion: unknown, dropped: Set<string>): Buffer {
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
      usage: messagesUsageFromChat(completion.usage),
    }),
  );
}
