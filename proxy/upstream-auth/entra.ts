import type { TokenCredential } from '@azure/identity';
import type { Logger } from '../../shared/logger.js';
import type { NowMs } from '../../shared/clock.js';
import { createBearerToken, CredentialsUnavailable, type BearerTokenSource, type MintedToken } from './bearer-token.js';

/** A provider's `azure_ad` entry: the names of the variables holding its identity, never the values. */
export interface EntraSettings {
  tenant_id_env: string;
  client_id_env: string;
  client_secret_env?: string | undefined;
  /** The login host, for sovereign clouds and tests (`https://login.microsoftonline.com` when absent). */
  authority_url?: string | undefined;
}

/** Azure OpenAI's audience: one token serves every deployment of every resource. */
const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/**
 * The three ways a service identifies itself to Entra, first match wins:
 * the secret the provider entry names; a certificate at
 * `AZURE_CLIENT_CERTIFICATE_PATH` (Azure's own variable, as its SDKs read
 * it); a federated token file at `AZURE_FEDERATED_TOKEN_FILE` (what AKS
 * workload identity mounts into the pod).
 */
type Way =
  | { kind: 'secret'; tenantId: string; clientId: string; secret: string }
  | { kind: 'certificate'; tenantId: string; clientId: string; path: string; password: string | undefined }
  | { kind: 'workload'; tenantId: string; clientId: string; tokenFile: string };

function wayOf(provider: string, settings: EntraSettings, env: NodeJS.ProcessEnv): Way {
  const unset = [settings.tenant_id_env, settings.client_id_env].filter((name) => !env[name]);
  if (settings.client_secret_env !== undefined && !env[settings.client_secret_env]) unset.push(settings.client_secret_env);
  if (unset.length > 0) throw new CredentialsUnavailable(provider, `${unset.join(', ')} ${unset.length === 1 ? 'is' : 'are'} not set`);
  const tenantId = env[settings.tenant_id_env]!;
  const clientId = env[settings.client_id_env]!;
  if (settings.client_secret_env !== undefined) return { kind: 'secret', tenantId, clientId, secret: env[settings.client_secret_env]! };
  const certificate = env.AZURE_CLIENT_CERTIFICATE_PATH;
  if (certificate) return { kind: 'certificate', tenantId, clientId, path: certificate, password: env.AZURE_CLIENT_CERTIFICATE_PASSWORD };
  const tokenFile = env.AZURE_FEDERATED_TOKEN_FILE;
  if (tokenFile) return { kind: 'workload', tenantId, clientId, tokenFile };
  throw new CredentialsUnavailable(
    provider,
    'azure_ad names no client_secret_env, and neither AZURE_CLIENT_CERTIFICATE_PATH nor AZURE_FEDERATED_TOKEN_FILE is set',
  );
}

async function credentialOf(way: Way, authorityUrl: string | undefined): Promise<TokenCredential> {
  // Loaded on the first token of an Entra provider: a proxy without one never pays for @azure/identity.
  const identity = await import('@azure/identity');
  // A login host of its own is trusted as given: instance discovery would ask login.microsoftonline.com about it.
  const options = authorityUrl === undefined ? {} : { authorityHost: authorityUrl, disableInstanceDiscovery: true };
  switch (way.kind) {
    case 'secret':
      return new identity.ClientSecretCredential(way.tenantId, way.clientId, way.secret, options);
    case 'certificate':
      return new identity.ClientCertificateCredential(
        way.tenantId,
        way.clientId,
        { certificatePath: way.path, ...(way.password === undefined ? {} : { certificatePassword: way.password }) },
        options,
      );
    case 'workload':
      return new identity.WorkloadIdentityCredential({ ...options, tenantId: way.tenantId, clientId: way.clientId, tokenFilePath: way.tokenFile });
  }
}

export interface EntraTokenOptions {
  provider: string;
  settings: EntraSettings;
  env: NodeJS.ProcessEnv;
  log: Logger;
  now?: NowMs;
}

/**
 * Entra ID access tokens for an Azure OpenAI provider, through
 * `@azure/identity`. What is missing from the environment is named on the
 * first call (and logged once), not at start: the proxy serves its other
 * providers meanwhile.
 */
export function createEntraToken(options: EntraTokenOptions): BearerTokenSource {
  const { provider, settings, env } = options;
  let credential: Promise<TokenCredential> | undefined;
  async function mint(): Promise<MintedToken> {
    credential ??= Promise.resolve()
      .then(() => credentialOf(wayOf(provider, settings, env), settings.authority_url))
      .catch((err: unknown) => {
        credential = undefined; // the environment may be fixed without a restart (a mounted secret appearing)
        throw err;
      });
    const access = await (await credential).getToken(COGNITIVE_SERVICES_SCOPE);
    if (access === null) throw new CredentialsUnavailable(provider, 'Entra ID returned no token');
    return {
      token: access.token,
      expiresAtMs: access.expiresOnTimestamp,
      ...(access.refreshAfterTimestamp === undefined ? {} : { refreshAtMs: access.refreshAfterTimestamp }),
    };
  }
  return createBearerToken({ provider, mint, log: options.log, ...(options.now === undefined ? {} : { now: options.now }) });
}
