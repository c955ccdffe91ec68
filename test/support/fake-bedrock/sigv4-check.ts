import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import aws4 from 'aws4';

/**
 * Checks a request's AWS Signature Version 4 the way Bedrock does, with
 * `aws4`: an implementation independent of the proxy's signer (Smithy's),
 * so the two agreeing is evidence, not a tautology. Refusals carry
 * Bedrock's own error types and messages.
 */

export interface FakeAwsIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When the session credentials stop being accepted (ms since the epoch). */
  expiresAtMs?: number;
}

export interface AwsRefusal {
  status: number;
  /** Bedrock's `x-amzn-errortype`, e.g. `InvalidSignatureException`. */
  type: string;
  message: string;
}

export interface SignedRequest {
  method: string;
  /** The path and query as they arrived. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const SKEW_MS = 5 * 60_000;
const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

const refuse = (type: string, message: string, status = 403): AwsRefusal => ({ status, type, message });

function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[:-]|\.\d{3}/g, '');
}

function parseAmzDate(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** AWS's words for a request signed too far from its own clock. */
function skewRefusal(signedAt: number, nowMs: number, stamp: string): AwsRefusal | undefined {
  if (signedAt < nowMs - SKEW_MS) {
    return refuse(
      'InvalidSignatureException',
      `Signature expired: ${stamp} is now earlier than ${amzDate(nowMs - SKEW_MS)} (${amzDate(nowMs)} - 5 min.)`,
    );
  }
  if (signedAt > nowMs + SKEW_MS) {
    return refuse(
      'InvalidSignatureException',
      `Signature not yet current: ${stamp} is still later than ${amzDate(nowMs + SKEW_MS)} (${amzDate(nowMs)} + 5 min.)`,
    );
  }
  return undefined;
}

interface ParsedAuthorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

function parseAuthorization(value: string): ParsedAuthorization | undefined {
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;:-]+), ?Signature=([0-9a-f]{64})$/.exec(
      value,
    );
  if (!m) return undefined;
  return { accessKeyId: m[1]!, date: m[2]!, region: m[3]!, service: m[4]!, signedHeaders: m[5]!.split(';'), signature: m[6]! };
}

/** What aws4 computes for the request as signed: only the headers the signer named, at the time it stated. */
function expectedSignature(req: SignedRequest, auth: ParsedAuthorization, identity: FakeAwsIdentity): string | undefined {
  const headers: Record<string, string> = {};
  for (const name of auth.signedHeaders) {
    const value = header(req.headers, name);
    if (value === undefined) return undefined;
    headers[name] = value;
  }
  const named = new Set(auth.signedHeaders);
  // aws4 adds these when absent and signs all it is given bar a few: it must sign exactly what the client did.
  const extraHeadersToIgnore = Object.fromEntries(
    ['host', 'content-type', 'content-length', 'x-amz-security-token'].filter((n) => !named.has(n)).map((n) => [n, true]),
  );
  const extraHeadersToInclude = Object.fromEntries(auth.signedHeaders.map((n) => [n, true]));
  const request = {
    method: req.method,
    host: headers.host,
    path: req.url,
    service: auth.service,
    region: auth.region,
    headers,
    body: req.body,
    extraHeadersToIgnore,
    extraHeadersToInclude,
  };
  const credentials = { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey, sessionToken: identity.sessionToken };
  // aws4.sign reads the signing time off the headers before it signs (RequestSigner#signature alone would sign at now).
  const signed = aws4.sign(request, credentials);
  const authorization = signed.headers?.Authorization;
  return typeof authorization === 'string' ? /Signature=([0-9a-f]{64})$/.exec(authorization)?.[1] : undefined;
}

/** Over HTTP/2 the AWS SDKs sign the `:authority` pseudo-header, which stands for `host`. */
function signsHost(auth: ParsedAuthorization): boolean {
  return auth.signedHeaders.includes('host') || auth.signedHeaders.includes(':authority');
}

function sameHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** The identity a request was signed by, or Bedrock's refusal. */
export function checkSigV4(
  req: SignedRequest,
  lookup: (accessKeyId: string) => FakeAwsIdentity | undefined,
  expected: { region: string; service: string; nowMs: number },
): FakeAwsIdentity | AwsRefusal {
  const authorization = header(req.headers, 'authorization');
  if (!authorization) return refuse('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const auth = parseAuthorization(authorization);
  if (!auth)
    return refuse('IncompleteSignatureException', `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.`, 400);
  const identity = lookup(auth.accessKeyId);
  const token = header(req.headers, 'x-amz-security-token');
  if (!identity || (identity.sessionToken ?? undefined) !== token)
    return refuse('UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (identity.expiresAtMs !== undefined && identity.expiresAtMs <= expected.nowMs)
    return refuse('ExpiredTokenException', 'The security token included in the request is expired');
  const stamp = header(req.headers, 'x-amz-date');
  const signedAt = stamp === undefined ? undefined : parseAmzDate(stamp);
  if (stamp === undefined || signedAt === undefined || !auth.signedHeaders.includes('x-amz-date') || !signsHost(auth)) {
    return refuse('IncompleteSignatureException', 'The request must sign the host (HTTP/2: :authority) and x-amz-date headers.', 400);
  }
  const skew = skewRefusal(signedAt, expected.nowMs, stamp);
  if (skew) return skew;
  if (auth.date !== stamp.slice(0, 8))
    return refuse(
      'InvalidSignatureException',
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${auth.date}' != '${stamp.slice(0, 8)}', from '${stamp}'.`,
    );
  if (auth.service !== expected.service)
    return refuse('InvalidSignatureException', `Credential should be scoped to correct service: '${expected.service}'. `);
  if (auth.region !== expected.region) return refuse('InvalidSignatureException', `Credential should be scoped to a valid region. `);
  const bodyHash = header(req.headers, 'x-amz-content-sha256');
  if (bodyHash !== undefined && bodyHash !== createHash('sha256').update(req.body).digest('hex')) {
    return refuse('InvalidSignatureException', 'The provided x-amz-content-sha256 header does not match what was computed.', 400);
  }
  const computed = expectedSignature(req, auth, identity);
  if (computed === undefined || !sameHex(computed, auth.signature)) return refuse('InvalidSignatureException', MISMATCH);
  return identity;
}

export function isRefusal(v: FakeAwsIdentity | AwsRefusal): v is AwsRefusal {
  return 'status' in v;
}
