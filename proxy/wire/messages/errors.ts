import type { ErrorKind } from '../../../shared/errors.js';

/** The Anthropic `error.type` of each outcome. */
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

/** An error in Anthropic's shape: `{ type: 'error', error: { type, message } }` (Anthropic's errors carry no code). */
export function messagesErrorBody(kind: ErrorKind, message: string): string {
  return JSON.stringify({ type: 'error', error: { type: MESSAGES_TYPES[kind], message } });
}
