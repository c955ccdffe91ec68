/**
 * Error bodies in each provider's own shape, as their APIs send them. The
 * types agree with the proxy's own for every status it answers with
 * (test/unit/proxy/wire/error-tables.test.ts), where the providers document
 * no other.
 */

export type Dialect = 'openai' | 'anthropic' | 'google';

interface OpenAIErrorFields {
  type: string;
  code: string | null;
  message: string;
}

function openaiDefaults(status: number): OpenAIErrorFields {
  switch (status) {
    case 400:
      return { type: 'invalid_request_error', code: null, message: 'Invalid request.' };
    case 401:
      return { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' };
    case 402:
      return { type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.' };
    case 403:
      return { type: 'permission_error', code: null, message: 'You are not allowed to access this resource.' };
    case 404:
      return { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' };
    case 413:
      return { type: 'invalid_request_error', code: null, message: 'Request too large.' };
    case 429:
      return { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Rate limit reached.' };
    default:
      if (status >= 500) return { type: 'server_error', code: null, message: 'The server had an error while processing your request.' };
      return { type: 'invalid_request_error', code: null, message: `Request failed with status ${status}.` };
  }
}

function anthropicType(status: number): string {
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
    case 504:
      return 'timeout_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function openaiError(status: number, message?: string, code?: string | null): string {
  const fields = openaiDefaults(status);
  return JSON.stringify({
    error: {
      message: message ?? fields.message,
      type: fields.type,
      param: null,
      code: code === undefined ? fields.code : code,
    },
  });
}

export function anthropicError(status: number, message?: string): string {
  const type = anthropicType(status);
  return JSON.stringify({ type: 'error', error: { type, message: message ?? `${type.replace(/_/g, ' ')} (status ${status})` } });
}

const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's shape: `code` repeats the HTTP status, `status` names the google.rpc code. */
export function googleError(status: number, message?: string): string {
  const name = GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
  return JSON.stringify({ error: { code: status, message: message ?? `Request failed: ${name}.`, status: name } });
}

/** `code` applies to OpenAI bodies only; omitted, it follows the status. */
export function errorBody(dialect: Dialect, status: number, message?: string, code?: string | null): string {
  if (dialect === 'google') return googleError(status, message);
  return dialect === 'openai' ? openaiError(status, message, code) : anthropicError(status, message);
}
