/**
 * Errors as Bedrock answers them to a client of the workspace's Converse
 * route: the exception's name in `x-amzn-errortype` (the AWS SDKs raise the
 * exception class of that name) and a body of `{"message"}`. The status is
 * the proxy's own, whichever client asked; the name is the exception Bedrock
 * raises for it (the reverse of errors.ts, which reads Bedrock's).
 */

const AMZN_ERROR_TYPE = 'x-amzn-errortype';

const BY_STATUS: Record<number, string> = {
  400: 'ValidationException',
  401: 'AccessDeniedException',
  402: 'ServiceQuotaExceededException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  413: 'ValidationException',
  422: 'ValidationException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  503: 'ServiceUnavailableException',
  504: 'ModelTimeoutException',
  529: 'ServiceUnavailableException',
};

/** The exception Bedrock names for an answer of this status. */
export function bedrockErrorType(status: number): string {
  return BY_STATUS[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
}

/** The head of an error answer of this status: JSON, its exception named. */
export function bedrockErrorHeaders(status: number): Record<string, string> {
  return { 'content-type': 'application/json', [AMZN_ERROR_TYPE]: bedrockErrorType(status) };
}

export function bedrockErrorBody(message: string): string {
  return JSON.stringify({ message });
}
