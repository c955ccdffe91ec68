import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { AuthHeader } from '../shared/models.js';
import { WIRE_FORMATS } from '../shared/wire-formats.js';
import type { WireFormat } from './call.js';
import { WIRE } from './wire/registry.js';

/**
 * What of the client's request reaches the provider: an allowlist, so hop-
 * by-hop headers, cookies and the client's own credentials never do. The
 * provider key is added by the caller. accept-encoding is not passed: the
 * usage tap reads the answer, so it must arrive uncompressed.
 */
const GENERAL = ['accept', 'user-agent'];
/**
 * The client's headers that belong to one provider API: on a translated call
 * they describe the client's format, not the provider's (Claude Code's
 * `anthropic-beta` list means nothing to a Chat Completions provider, and a
 * strict one may refuse it), so they go only to a provider of a format that
 * owns them (wire/<format>/index.ts `ownHeaders`).
 */
const PASSED = [...new Set([...GENERAL, ...WIRE_FORMATS.flatMap((f) => WIRE[f].ownHeaders)])];
/** What reaches a provider of each format: the general headers and its own, made once. */
const PASSED_TO = Object.fromEntries(WIRE_FORMATS.map((f) => [f, [...GENERAL, ...WIRE[f].ownHeaders]])) as Record<WireFormat, string[]>;

/** `rotating`: a cloud token, good for an hour or less, so its headers are built per call rather than kept per secret (they would pile up). */
type UpstreamAuth = { header: AuthHeader; secret: string; rotating?: boolean };

/**
 * The part of the provider's headers that is the same on every call, as
 * name/value pairs: built once per provider. Looked up by the extra-headers
 * object, the auth header's name and the secret in turn, all strings and
 * objects the provider entry already holds: a key joined from them would be
 * a new string to hash on every call.
 */
type FixedByAuth = Map<AuthHeader, Map<string, string[]>>;
const fixedWithoutExtra: FixedByAuth = new Map();
const fixedByExtra = new WeakMap<Record<string, string>, FixedByAuth>();

function fixedHeaders(auth: UpstreamAuth, extra: Record<string, string> | undefined): string[] {
  if (auth.rotating) return buildFixed(auth, extra);
  let byAuth = fixedWithoutExtra;
  if (extra) {
    let forExtra = fixedByExtra.get(extra);
    if (!forExtra) fixedByExtra.set(extra, (forExtra = new Map<AuthHeader, Map<string, string[]>>()));
    byAuth = forExtra;
  }
  let bySecret = byAuth.get(auth.header);
  if (!bySecret) byAuth.set(auth.header, (bySecret = new Map<string, string[]>()));
  let fixed = bySecret.get(auth.secret);
  if (!fixed) bySecret.set(auth.secret, (fixed = buildFixed(auth, extra)));
  return fixed;
}

function buildFixed(auth: UpstreamAuth, extra: Record<string, string> | undefined): string[] {
  const fixed = ['content-type', 'application/json', 'accept-encoding', 'identity'];
  // The operator's headers for this provider; the body's framing and the credential below always win.
  if (extra) for (const name in extra) if (!(name in FIXED)) fixed.push(name, extra[name]!);
  fixed.push(auth.header, auth.header === 'authorization' ? `Bearer ${auth.secret}` : auth.secret);
  return fixed;
}

/**
 * The provider's request headers as undici's flat name/value array: the
 * fixed part (framing, the operator's extra headers, the credential) built
 * once per provider and copied, then the length and the client's allowed
 * headers (an operator's extra header of the same name wins); with the
 * provider's format given, another API's headers are left off.
 */
export function upstreamHeaders(
  client: IncomingHttpHeaders,
  auth: UpstreamAuth,
  contentLength: number,
  extra?: Record<string, string>,
  provider?: WireFormat,
): string[] {
  const out = fixedHeaders(auth, extra).slice();
  out.push('content-length', String(contentLength));
  for (const name of provider === undefined ? PASSED : PASSED_TO[provider]) {
    if (extra && name in extra) continue;
    const v = client[name];
    if (typeof v === 'string') out.push(name, v);
    else if (Array.isArray(v)) out.push(name, v.join(', '));
  }
  return out;
}

/** Headers a provider entry's extra_headers may not set. */
const FIXED: Record<string, true> = {
  'content-type': true,
  'content-length': true,
  'accept-encoding': true,
  authorization: true,
  'x-api-key': true,
  'api-key': true,
  host: true,
};

/**
 * The provider's response headers that reach the client: an allowlist, so a
 * self-hosted server's debug headers, the operator's account details
 * (openai-organization, anthropic-organization-id), its cookies and its
 * account's rate limits (the caller's own limits are the proxy's
 * x-ratelimit-* headers) never do. Kept: the body's framing, the request
 * ids people quote to support, and what the OpenAI and Anthropic SDKs read
 * to decide on a retry (retry-after, retry-after-ms, x-should-retry).
 */
const RELAYED = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'cache-control',
  // A provider's redirect is relayed, not followed (docs/proxy.md): the client sees where it pointed.
  'location',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'request-id',
  'x-request-id',
  'openai-processing-ms',
  'openai-version',
]);

/** The allowed part of the provider's headers, then `extra` on top: built in one object, since this runs once per answer. */
export function downstreamHeaders(upstream: IncomingHttpHeaders, extra?: Record<string, string>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || !RELAYED.has(name)) continue;
    // The proxy's own x-request-id names the call; the provider's is kept under another name.
    out[name === 'x-request-id' ? 'x-upstream-request-id' : name] = value;
  }
  if (extra) for (const name in extra) out[name] = extra[name];
  return out;
}

/** Bearer token or x-api-key, in the order the format prefers; a format with a header of its own (`x-goog-api-key`) takes that first. */
export function presentedKey(headers: IncomingHttpHeaders, prefer: 'authorization' | 'x-api-key' | 'x-goog-api-key'): string | undefined {
  if (prefer === 'x-goog-api-key') {
    const own = headers[prefer];
    if (typeof own === 'string' && own.trim()) return own.trim();
  }
  const bearer = () => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
    return m?.[1];
  };
  const apiKey = () => {
    const v = headers['x-api-key'];
    return typeof v === 'string' && v.trim() ? v.trim() : undefined;
  };
  return prefer === 'authorization' ? (bearer() ?? apiKey()) : (apiKey() ?? bearer());
}

/**
 * Two different keys (a Bearer token and an x-api-key that disagree), or two
 * Authorization headers (Node keeps only the first): which key to bill is not
 * the proxy's to guess, so the call is refused as unauthenticated.
 */
export function ambiguousCredentials(headers: IncomingHttpHeaders, rawHeaders: string[]): boolean {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  const googKey = headers['x-goog-api-key'];
  // Google's header beside another that holds a different key is as ambiguous as the other two.
  if (googKey !== undefined) {
    const other = authorization === undefined ? apiKey : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    if (other !== undefined && String(other).trim() !== String(googKey).trim()) return true;
  }
  if (authorization === undefined) return false;
  if (apiKey !== undefined) {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    if (bearer !== String(apiKey).trim()) return true;
  }
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}
