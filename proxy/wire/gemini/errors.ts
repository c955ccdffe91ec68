import { statusOf, type ErrorKind } from '../../../shared/errors.js';
import { isObject } from '../../../shared/json.js';

/**
 * Google's error shape, `{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}`:
 * `code` repeats the HTTP status, `status` is the google.rpc code's name.
 */

/** The google.rpc status name of each HTTP status Google answers with; others by their class. */
const RPC_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'FAILED_PRECONDITION',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function rpcStatusOf(status: number): string {
  return RPC_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** Google's error body for `status` with `message`. */
export function googleError(status: number, message: string): string {
  return JSON.stringify({ error: { code: status, message, status: rpcStatusOf(status) } });
}

/** Tollgate's own error in Google's shape (the HTTP status is the kind's). */
export function geminiErrorBody(kind: ErrorKind, message: string): string {
  return googleError(statusOf(kind), message);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The message of an error body in any provider's shape: Google's
 * `error.message`, OpenAI's `error.message`, Anthropic's `error.message`,
 * a bare `message` or `error` string. Google streams without `alt=sse`
 * wrap the error in a one-element array.
 */
export function errorMessageOf(body: Buffer): string | undefined {
  let parsed = parse(body.toString('utf8'));
  if (Array.isArray(parsed)) parsed = parsed[0];
  if (!isObject(parsed)) return undefined;
  const error = parsed.error;
  if (typeof error === 'string' && error) return error;
  if (isObject(error) && typeof error.message === 'string' && error.message) return error.message;
  return typeof parsed.message === 'string' && parsed.message ? parsed.message : undefined;
}

/** Google's rpc status name from its error body, if it is one. */
export function rpcStatusIn(body: Buffer): string | undefined {
  let parsed = parse(body.toString('utf8'));
  if (Array.isArray(parsed)) parsed = parsed[0];
  const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : undefined;
  return typeof error?.status === 'string' ? error.status : undefined;
}

/** A provider's error answer (any format) → Google's error body for a Gemini client, the provider's message kept. */
export function geminiErrorFrom(status: number, body: Buffer): Buffer {
  return Buffer.from(googleError(status, errorMessageOf(body) ?? `The model provider answered with status ${status}.`));
}

/** How Google says the input is over the model's context window. */
export const GOOGLE_CONTEXT_OVERFLOW = /input token count.*exceeds the maximum number of tokens/i;
