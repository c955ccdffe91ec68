import { randomUUID } from 'node:crypto';
import { isObject, type JsonObject } from '../../../shared/json.js';
import { errorMessageOf, GOOGLE_CONTEXT_OVERFLOW, rpcStatusIn } from './errors.js';
import { chatFinishOf } from './finish.js';
import { chatUsageOf } from './usage.js';

/**
 * A Gemini provider's answer → what a Chat Completions client expects: the
 * whole answer and errors (the stream, chunk by chunk, is stream-to-chat.ts).
 */

type Json = Record<string, unknown>;

/** A function call's id as Gemini gave it; one is made when it gave none, since a Chat tool message must name it. */
export function callId(id: unknown): string {
  return typeof id === 'string' && id !== '' ? id : `call_${randomUUID().replace(/-/g, '')}`;
}

export function chatToolCall(call: Json, index?: number): Json {
  const out: Json = { id: callId(call.id), type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } };
  return index === undefined ? out : { index, ...out };
}

/**
 * Parts a Chat message has no place for: thoughts (their text is the
 * model's reasoning, which Chat's answer does not carry) and Google's own
 * tools' code and results; named `parts[<kind>]`.
 */
export function notePart(part: Json, dropped: Set<string>): void {
  if (part.thought === true) dropped.add('parts[thought]');
  else if (part.text === undefined && part.functionCall === undefined) {
    const key = Object.keys(part).find((k) => k !== 'thoughtSignature');
    if (key !== undefined) dropped.add(`parts[${key}]`);
  }
}

function choiceOf(candidate: Json, fallbackIndex: number, dropped: Set<string>): Json {
  const content = isObject(candidate.content) ? candidate.content : {};
  let text: string | null = null;
  const calls: Json[] = [];
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isObject(part)) continue;
    notePart(part, dropped);
    if (part.thought === true) continue;
    if (typeof part.text === 'string') text = (text ?? '') + part.text;
    else if (isObject(part.functionCall)) calls.push(chatToolCall(part.functionCall));
  }
  const message: Json = { role: 'assistant', content: text, refusal: null };
  if (calls.length) message.tool_calls = calls;
  const index = typeof candidate.index === 'number' ? candidate.index : fallbackIndex;
  return { index, message, logprobs: null, finish_reason: chatFinishOf(candidate.finishReason, calls.length > 0) };
}

/** A whole Gemini answer (parsed) → the Chat completion object. */
export function chatCompletionOf(answer: unknown, alias: string, created: number, dropped: Set<string>): JsonObject {
  if (!isObject(answer)) return chatErrorObject(502, 'The model provider sent an answer that is not JSON.');
  const candidates = Array.isArray(answer.candidates) ? answer.candidates : [];
  const choices = candidates.map((c: unknown, i) => choiceOf(isObject(c) ? c : {}, i, dropped));
  // A prompt Google blocked has no candidate: an empty, filtered answer.
  if (choices.length === 0) {
    choices.push({ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' });
  }
  return {
    id: typeof answer.responseId === 'string' ? answer.responseId : `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created,
    model: alias,
    choices,
    usage: chatUsageOf(answer.usageMetadata),
  };
}

/** The Chat error type and code of a Google error, by its status. */
function chatTypeOf(status: number, rpc: string | undefined, message: string): [type: string, code: string | null] {
  if (status === 400 && GOOGLE_CONTEXT_OVERFLOW.test(message)) return ['invalid_request_error', 'context_length_exceeded'];
  if (status === 401 || rpc === 'UNAUTHENTICATED') return ['invalid_request_error', 'invalid_api_key'];
  if (status === 403) return ['permission_error', null];
  if (status === 404) return ['invalid_request_error', 'not_found'];
  if (status === 429) return ['rate_limit_error', 'rate_limit_exceeded'];
  return status >= 500 ? ['server_error', null] : ['invalid_request_error', null];
}

function chatErrorObject(status: number, message: string, rpc?: string): JsonObject {
  const [type, code] = chatTypeOf(status, rpc, message);
  return { error: { message, type, param: null, code } };
}

/** A Gemini provider's error answer → Chat's error body, same status, Google's message kept. */
export function chatErrorFrom(status: number, body: Buffer): Buffer {
  const message = errorMessageOf(body) ?? `The model provider answered with status ${status}.`;
  return Buffer.from(JSON.stringify(chatErrorObject(status, message, rpcStatusIn(body))));
}

/** An error met inside a Gemini stream (`data: {"error":{…}}`) → Chat's error chunk. */
export function chatStreamError(error: unknown): JsonObject {
  const e = isObject(error) ? error : {};
  const status = typeof e.code === 'number' ? e.code : 500;
  const message = typeof e.message === 'string' && e.message ? e.message : 'The model provider reported an error mid-answer.';
  return chatErrorObject(status, message, typeof e.status === 'string' ? e.status : undefined);
}
