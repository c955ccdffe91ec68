import { readFile } from 'node:fs/promises';
import type { AuthClient } from 'google-auth-library';
import type { Logger } from '../../shared/logger.js';
import type { NowMs } from '../../shared/clock.js';
import { isObject } from '../../shared/json.js';
import { createBearerToken, CredentialsUnavailable, type BearerTokenSource, type MintedToken } from './bearer-token.js';

/** Vertex AI's OAuth scope. */
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Where google-auth-library posts a service account's signed assertion, whatever the key file says. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** A service account's key, as the key file holds it. */
interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

/**
 * The service-account key `GOOGLE_APPLICATION_CREDENTIALS` names, or
 * undefined when the variable is unset or names another kind of file
 * (workload identity federation's `external_account`, gcloud's user
 * credentials), which Application Default Credentials read themselves. Unset
 * means ADC find another way: gcloud's own file, or the metadata server (GKE
 * workload identity, Compute Engine).
 */
async function serviceAccountKey(provider: string, env: NodeJS.ProcessEnv): Promise<ServiceAccountKey | undefined> {
  const path = env.GOOGLE_APPLICATION_CREDENTIALS;
  if (!path) return undefined;
  const named = `GOOGLE_APPLICATION_CREDENTIALS names ${path}`;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CredentialsUnavailable(provider, `${named}, which cannot be read`, err);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CredentialsUnavailable(provider, `${named}, which is not JSON`, err);
  }
  if (!isObject(json)) throw new CredentialsUnavailable(provider, `${named}, which is not a credentials file`);
  if (json.type !== 'service_account') return undefined;
  if (typeof json.client_email !== 'string' || typeof json.private_key !== 'string') {
    throw new CredentialsUnavailable(provider, `${named}, a service-account key without client_email or private_key`);
  }
  return {
    client_email: json.client_email,
    private_key: json.private_key,
    ...(typeof json.private_key_id === 'string' ? { private_key_id: json.private_key_id } : {}),
    ...(typeof json.token_uri === 'string' ? { token_uri: json.token_uri } : {}),
  };
}

/**
 * google-auth-library 11 posts a service account's assertion to Google's
 * fixed token URL and ignores the key file's `token_uri`; the key file is the
 * operator's word on where tokens come from (a private endpoint, a test's
 * token server), so the request is pointed there. The assertion itself (its
 * `aud` included) is the library's, unchanged.
 */
function honourTokenUri(client: AuthClient, tokenUri: string): void {
  if (tokenUri === GOOGLE_TOKEN_URL) return;
  const target = new URL(tokenUri);
  client.transporter.interceptors.request.add({
    resolved: (config) => {
      if (config.url.href === GOOGLE_TOKEN_URL) config.url = target;
      return Promise.resolve(config);
    },
  });
}

async function clientOf(provider: string, env: NodeJS.ProcessEnv): Promise<AuthClient> {
  const key = await serviceAccountKey(provider, env);
  // Loaded on the first token of a Vertex provider: a proxy without one never pays for google-auth-library.
  const { GoogleAuth, JWT } = await import('google-auth-library');
  if (key !== undefined) {
    const client = new JWT({ email: key.client_email, key: key.private_key, keyId: key.private_key_id, scopes: [CLOUD_PLATFORM_SCOPE] });
    if (key.token_uri !== undefined) honourTokenUri(client, key.token_uri);
    return client;
  }
  try {
    return await new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] }).getClient();
  } catch (err) {
    throw new CredentialsUnavailable(
      provider,
      'no Application Default Credentials (set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run with workload identity)',
      err,
    );
  }
}

export interface GoogleTokenOptions {
  provider: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  now?: NowMs;
}

/**
 * OAuth access tokens for a Vertex AI provider from Application Default
 * Credentials through google-auth-library: a service-account key file,
 * workload identity federation (an `external_account` file) or the metadata
 * server (GKE workload identity). `env` is the process's environment: ADC
 * read files other than a service-account key from it themselves.
 */
export function createGoogleToken(options: GoogleTokenOptions): BearerTokenSource {
  const { provider, env } = options;
  let client: Promise<AuthClient> | undefined;
  async function mint(): Promise<MintedToken> {
    client ??= clientOf(provider, env).catch((err: unknown) => {
      client = undefined; // a key file mounted late is found on the next call
      throw err;
    });
    const auth = await client;
    const { token } = await auth.getAccessToken();
    const expiry = auth.credentials.expiry_date;
    if (!token || typeof expiry !== 'number') throw new CredentialsUnavailable(provider, 'Google returned no access token');
    return { token, expiresAtMs: expiry };
  }
  return createBearerToken({ provider, mint, log: options.log, ...(options.now === undefined ? {} : { now: options.now }) });
}
