import type { ErrorKind } from '../../shared/errors.js';
import type { WireFormat } from '../call.js';

/** The `error.type` each outcome has in each wire format. */
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

const MESSAGES_TYPES: Record<ErrorKind, string> = {
  invalid_input: 'invalid_request_error',
  unauthenticated: 'authentication_error',
  forbidden: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  too_large: 'request_too_large',
  rate_limited: 'rate_limit_error',
  insufficient_funds: 'billing_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'api_error',
  unavailable: 'overloaded_error',
  internal: 'api_error',
};

/** Default OpenAI `code` per outcome where the contract names one. */
const CHAT_CODES: Partial<Record<ErrorKind, string>> = {
  unauthenticated: 'invalid_api_key',
  insufficient_funds: 'insufficient_quota',
  rate_limited: 'rate_limit_exceeded',
};

export function errorBody(format: WireFormat, kind: ErrorKind, message: string, code?: string): string {
  if (format === 'messages') {
    return JSON.stringify({ type: 'error', error: { type: MESSAGES_TYPES[kind], message } });
  }
  return JSON.stringify({
    error: { message, type: CHAT_TYPES[kind], param: null, code: code ?? CHAT_CODES[kind] ?? null },
  });
}
