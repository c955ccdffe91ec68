import { isObject } from '../../../shared/json.js';
import { parseJson, type Json } from './json.js';

/**
 * The Responses API reports errors in the OpenAI shape: a JSON answer
 * `{ error: { message, type, param, code } }` with the HTTP status, and,
 * inside a stream, a `response.failed` event whose response carries
 * `error: { code, message }`.
 */

export interface ResponsesError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** The `error.type` OpenAI's SDKs expect for a status (they map the status to their error classes). */
export function openaiErrorType(status: number): string {
  switch (status) {
    case 401:
    case 400:
    case 404:
    case 409:
    case 413:
    case 422:
      return 'invalid_request_error';
    case 402:
      return 'insufficient_quota';
    case 403:
      return 'permission_error';
    case 429:
      return 'rate_limit_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * The error a provider's answer says, whatever shape it came in: OpenAI's
 * `{ error: { … } }`, Anthropic's `{ type: 'error', error: { type, message } }`,
 * a bare `{ error: 'text' }` or `{ message }`. Undefined when nothing readable.
 */
export function providerError(body: unknown): (Partial<ResponsesError> & { message: string }) | undefined {
  if (!isObject(body)) return undefined;
  const e = body.error;
  if (typeof e === 'string' && e) return { message: e };
  if (isObject(e) && typeof e.message === 'string' && e.message) {
    return {
      message: e.message,
      type: typeof e.type === 'string' ? e.type : undefined,
      code: typeof e.code === 'string' ? e.code : null,
      param: typeof e.param === 'string' ? e.param : null,
    };
  }
  return typeof body.message === 'string' && body.message ? { message: body.message } : undefined;
}

/**
 * A provider's error answer → the OpenAI error body the client's SDK reads,
 * with the provider's status (kept by the caller) and message. An OpenAI
 * body keeps its own type and code; any other shape gets the status's type.
 */
export function toOpenAIErrorBody(status: number, body: Buffer): Buffer {
  const parsed = parseJson(body.toString('utf8'));
  const found = providerError(parsed);
  const openaiShaped = isObject(parsed) && isObject(parsed.error) && typeof (parsed.error as Json).type === 'string' && !('type' in parsed);
  const error: ResponsesError = {
    message: found?.message ?? `The model provider answered with status ${status}.`,
    type: openaiShaped && found?.type ? found.type : openaiErrorType(status),
    param: found?.param ?? null,
    code: found?.code ?? null,
  };
  return Buffer.from(JSON.stringify({ error }));
}
