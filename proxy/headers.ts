import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { AuthHeader } from '../shared/models.js';

/**
 * What of the client's request reaches the provider: an allowlist, so hop-
 * by-hop headers, cookies and the client's own credentials never do. The
 * provider key is added by the caller. accept-encoding is not passed: the
 * usage tap reads the answer, so it must arrive uncompressed.
 */
const PASSED = ['accept', 'user-agent', 'anthropic-version', 'anthropic-beta', 'openai-beta'];

export function upstreamHeaders(
  client: IncomingHttpHeaders,
  auth: { header: AuthHeader; secret: string },
  contentLength: number,
  extra?: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(contentLength),
    'accept-encoding': 'identity',
  };
  for (const name of PASSED) {
    const v = client[name];
    if (typeof v === 'string') out[name] = v;
    else if (Array.isArray(v)) out[name] = v.join(', ');
  }
  // The operator's headers for this provider; the body's framing and the credential below always win.
  if (extra) for (const name in extra) if (!(name in FIXED)) out[name] = extra[name]!;
  out[auth.header] = auth.header === 'authorization' ? `Bearer ${auth.secret}` : auth.secret;
  return out;
}

/** Headers a provider entry's extra_headers may not set. */
const FIXED: Record<string, true> = { 'content-type': true, 'content-length': true, 'accept-encoding': true, authorization: true, 'x-api-key': true, 'api-key': true, host: true };

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Headers that describe the operator's account with the provider, not the
 * caller's key: its organization, its rate limits (the caller's own limits
 * are the proxy's x-ratelimit-* headers), and its cookies.
 */
const OPERATOR_ONLY = /^(openai-organization|openai-project|anthropic-organization-id|set-cookie|x-ratelimit-|anthropic-ratelimit-)/;

/** The header names a Connection header lists (hop-by-hop too); none in the usual case, so no Set is built then. */
function connectionNamed(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  const named = new Set(
    String(connection)
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  return named.size ? named : undefined;
}

/**
 * The provider's response headers minus hop-by-hop ones (and those the
 * Connection header names) and the operator's own, then `extra` on top:
 * built in one object, since this runs once per answer.
 */
export function downstreamHeaders(
  upstream: IncomingHttpHeaders,
  dropLength: boolean,
  extra?: Record<string, string>,
): OutgoingHttpHeaders {
  const named = connectionNamed(upstream.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name) || OPERATOR_ONLY.test(name)) continue;
    if (dropLength && name === 'content-length') continue;
    out[name === 'x-request-id' ? 'x-upstream-request-id' : name] = value;
  }
  if (extra) for (const name in extra) out[name] = extra[name];
  return out;
}

/** Bearer token or x-api-key, in the order the format prefers. */
export function presentedKey(headers: IncomingHttpHeaders, prefer: 'authorization' | 'x-api-key'): string | undefined {
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
