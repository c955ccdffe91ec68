import { constants, createHash, verify, type X509Certificate } from 'node:crypto';

/** The header and claims of a client assertion, as Entra reads them. */
interface AssertionParts {
  header: { alg?: string; x5t?: string; 'x5t#S256'?: string };
  claims: { aud?: string; iss?: string; sub?: string; exp?: number; nbf?: number; jti?: string };
  signed: Buffer;
  signature: Buffer;
}

function partsOf(assertion: string): AssertionParts | undefined {
  const pieces = assertion.split('.');
  if (pieces.length !== 3) return undefined;
  const [head, payload, signature] = pieces as [string, string, string];
  try {
    return {
      header: JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as AssertionParts['header'],
      claims: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as AssertionParts['claims'],
      signed: Buffer.from(`${head}.${payload}`),
      signature: Buffer.from(signature, 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/** The certificate's thumbprint as a JWT header names it: the DER's digest, base64url. */
function thumbprint(cert: X509Certificate, algorithm: 'sha1' | 'sha256'): string {
  return createHash(algorithm).update(cert.raw).digest('base64url');
}

/** Whether the signature is the certificate's key's: RS256 (PKCS #1 v1.5) with `x5t`, PS256 (PSS) with `x5t#S256`, as MSAL signs. */
function signedBy(parts: AssertionParts, cert: X509Certificate): boolean {
  if (parts.header.alg === 'RS256') return verify('RSA-SHA256', parts.signed, cert.publicKey, parts.signature);
  if (parts.header.alg !== 'PS256') return false;
  const key = { key: cert.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
  return verify('sha256', parts.signed, key, parts.signature);
}

/**
 * Why Entra refuses a certificate's client assertion (RFC 7523), or
 * undefined when it is good: the thumbprint header names the certificate
 * registered on the app, the certificate's key signed it, it is for this
 * token endpoint and this app, and it is current.
 */
export function certificateAssertionProblem(assertion: string, cert: X509Certificate, clientId: string, audience: string): string | undefined {
  const parts = partsOf(assertion);
  if (parts === undefined) return 'not a JWT';
  const { header, claims } = parts;
  const named = header['x5t#S256'] !== undefined ? header['x5t#S256'] === thumbprint(cert, 'sha256') : header.x5t === thumbprint(cert, 'sha1');
  if (!named) return 'the certificate used to sign the client assertion is not registered on the application';
  if (!signedBy(parts, cert)) return 'the client assertion contains an invalid signature';
  if (claims.aud !== audience) return `aud ${String(claims.aud)} is not the token endpoint`;
  if (claims.iss !== clientId || claims.sub !== clientId) return 'iss and sub must be the client id';
  const now = Date.now() / 1000;
  if (typeof claims.exp !== 'number' || claims.exp < now || (claims.nbf !== undefined && claims.nbf > now + 300)) return 'the assertion is expired';
  return undefined;
}
