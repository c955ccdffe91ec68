import type { ErrorKind } from '../../../shared/errors.js';

/** The OpenAI `error.type` of each outcome. */
const CHAT_TYPES: Record<ErrorKind, string> = {
  invalid_input: 'invalid_request_error',
  unauthenticated: 'invalid_request_error',
  forbidden: 'permission_error',
  not_found: 'invalid_request_error',
  conflict: 'invalid_request_error',
  too_large: 'invalid_request_error',
  rate_limited: 'rate_limit_error',
  insufficient_funds: 'insufficient_quota',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'api_error',
  unavailable: 'api_error',
  internal: 'api_error',
};

/** Default OpenAI `code` per outcome where the contract names one. */
const CHAT_CODES: Partial<Record<ErrorKind, string>> = {
  unauthenticated: 'invalid_api_key',
  insufficient_funds: 'insufficient_quota',
  rate_limited: 'rate_limit_exceeded',
};

/** An error in OpenAI's shape: `{ error: { message, type, param, code } }`. */
export function chatErrorBody(kind: ErrorKind, message: string, code?: string): string {
  return JSON.stringify({
    error: { message, type: CHAT_TYPES[kind], param: null, code: code ?? CHAT_CODES[kind] ?? null },
  });
}
