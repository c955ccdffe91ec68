import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { issuedTokens, type IssuedTokens } from './issued-tokens.js';
import { bodyText, closeServer, listenLoopback, sendJson } from './relay.js';

/** The audience Google's token endpoint requires of an assertion, whichever host serves it. */
const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';

export interface FakeGoogleToken {
  /** The token endpoint, as a key file's `token_uri`. */
  tokenUri: string;
  /** The service account the test's key belongs to. */
  clientEmail: string;
  /** Writes a service-account key file (a throwaway RSA key made for this server) into `dir` and returns its path. */
  writeKeyFile(dir: string): string;
  tokens: IssuedTokens;
  /** What the endpoint refused, and why, in order. */
  refusals: string[];
  close(): Promise<void>;
}

function b64json(part: string): unknown {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

/** Why an assertion is refused, as Google's token endpoint checks it, or undefined when it is good. */
function assertionProblem(assertion: string, publicKey: KeyObject, clientEmail: string, keyId: string): string | undefined {
  const parts = assertion.split('.');
  if (parts.length !== 3) return 'not a JWT';
  const [head, payload, signature] = parts as [string, string, string];
  const header = b64json(head) as { alg?: string; kid?: string };
  if (header.alg !== 'RS256') return `alg ${String(header.alg)}`;
  if (header.kid !== undefined && header.kid !== keyId) return 'unknown key id';
  if (!verify('RSA-SHA256', Buffer.from(`${head}.${payload}`), publicKey, Buffer.from(signature, 'base64url'))) return 'bad signature';
  const claims = b64json(payload) as { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number };
  const now = Date.now() / 1000;
  if (claims.iss !== clientEmail) return 'wrong issuer';
  if (claims.aud !== GOOGLE_TOKEN_AUDIENCE) return 'wrong audience';
  if (!claims.scope?.split(' ').includes(CLOUD_PLATFORM)) return 'no cloud-platform scope';
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return 'no iat/exp';
  if (claims.iat > now + 60 || claims.exp < now || claims.exp - claims.iat > 3600) return 'expired or too long';
  return undefined;
}

/**
 * Google's OAuth token endpoint for a service account: it takes a JWT
 * assertion only when the test's service-account key signed it for the
 * cloud-platform scope, and answers with a short-lived access token.
 */
export async function startFakeGoogleToken(): Promise<FakeGoogleToken> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = randomBytes(8).toString('hex');
  const clientEmail = 'tollgate-test@test-project.iam.gserviceaccount.com';
  const tokens = issuedTokens('ya29.fake-', 3600);
  const refusals: string[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await bodyText(req));
    if (req.method !== 'POST' || req.url !== '/token') return sendJson(res, 404, { error: 'not_found' });
    const assertion = form.get('assertion');
    const problem =
      form.get('grant_type') !== JWT_BEARER
        ? 'grant_type'
        : assertion === null
          ? 'no assertion'
          : assertionProblem(assertion, publicKey, clientEmail, keyId);
    if (problem !== undefined) {
      refusals.push(problem);
      return sendJson(res, 400, { error: 'invalid_grant', error_description: `Invalid JWT: ${problem}` });
    }
    sendJson(res, 200, { access_token: tokens.issue(), expires_in: tokens.lifetimeSeconds, token_type: 'Bearer' });
  }

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  const port = await listenLoopback(server);
  const tokenUri = `http://127.0.0.1:${port}/token`;
  return {
    tokenUri,
    clientEmail,
    tokens,
    refusals,
    writeKeyFile(dir) {
      const path = join(dir, 'service-account.json');
      const key = {
        type: 'service_account',
        project_id: 'test-project',
        private_key_id: keyId,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: clientEmail,
        client_id: '100000000000000000001',
        token_uri: tokenUri,
      };
      writeFileSync(path, JSON.stringify(key), { mode: 0o600 });
      return path;
    },
    close: () => closeServer(server),
  };
}
