import { isObject } from '../../../shared/json.js';

/**
 * Bedrock's error answers (`{"message"}` with the type in
 * `x-amzn-errortype`) as the Messages error the rest of the proxy speaks
 * (the Chat error for a model called through Converse),
 * so each client gets it in its own format. A refusal of the provider's
 * own credentials or signature is the operator's problem, not the
 * caller's: a 503 naming the provider and what Bedrock refused — a clock
 * more than five minutes off named as such — and, as `refusal`, the line
 * the provider's refusal episode logs once (upstream-auth/refusal-episode.ts).
 */
const BY_TYPE: Record<string, { status?: number; type: string }> = {
  ValidationException: { type: 'invalid_request_error' },
  ResourceNotFoundException: { type: 'not_found_error' },
  ThrottlingException: { type: 'rate_limit_error' },
  ServiceQuotaExceededException: { type: 'rate_limit_error' },
  ServiceUnavailableException: { type: 'overloaded_error' },
  ModelNotReadyException: { type: 'overloaded_error' },
};
const CREDENTIAL_REFUSALS = new Set([
  // The provider's identity may not invoke the model (IAM, or model access not granted): no caller can fix that either.
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
  'IncompleteSignatureException',
  'MissingAuthenticationTokenException',
]);

/** The first line of Bedrock's message: a refused signature's goes on with the canonical request, whose headers may hold a session token. */
function messageOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const said = isObject(parsed) ? (parsed.message ?? parsed.Message) : undefined;
    if (typeof said === 'string') return said.split('\n', 1)[0]!.trim();
  } catch {
    /* not JSON: said without its text */
  }
  return '';
}

export function messagesErrorFromBedrock(
  provider: string,
  status: number,
  errorType: string | undefined,
  body: Buffer,
  converse = false,
): { status: number; body: Buffer; refusal: string | undefined } {
  const type = (errorType ?? '').split(':')[0]!;
  const said = messageOf(body);
  let out: { status: number; type: string; message: string };
  const refused = CREDENTIAL_REFUSALS.has(type);
  if (refused) {
    const skew = /^Signature (expired|not yet current)/.test(said);
    const what = skew
      ? "the request's signature: this proxy's clock is more than five minutes off AWS's"
      : type === 'AccessDeniedException'
        ? "the provider's access to the model"
        : "the provider's AWS credentials";
    out = { status: 503, type: 'api_error', message: `Bedrock refused ${what} (provider "${provider}", ${type}: ${said}).` };
  } else {
    const known = BY_TYPE[type];
    out = { status, type: known?.type ?? 'api_error', message: `Bedrock: ${type || `HTTP ${status}`}${said ? `: ${said}` : ''}` };
  }
  // A Converse call's answer is read as Chat's (converse-answer.ts): so is its error, in OpenAI's shape.
  const error = converse
    ? { error: { message: out.message, type: out.type, code: null } }
    : { type: 'error', error: { type: out.type, message: out.message } };
  return { status: out.status, body: Buffer.from(JSON.stringify(error)), refusal: refused ? out.message : undefined };
}
