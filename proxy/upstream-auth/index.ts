/**
 * How a call to a provider proves who it is, beyond a static key:
 * - Bedrock signs each attempt (SigV4) or sends its API key: an authorizer
 *   (`createUpstreamAuthorizers`) that builds the attempt's own request;
 * - Vertex and Azure with Entra ID send a bearer token minted by their cloud
 *   and renewed before it expires (`createUpstreamAuth`), on the ordinary
 *   request path.
 */
import type { NowMs } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { ProviderConfig } from '../../shared/models.js';
import { createAwsCredentialSource, standardAwsChain } from './aws-credentials.js';
import { createAwsSigV4Authorizer, createBedrockApiKeyAuthorizer } from './aws.js';
import type { UpstreamAuthorizer } from './authorizer.js';
import type { BearerTokenSource } from './bearer-token.js';
import { createEntraToken } from './entra.js';
import { createGoogleToken } from './google.js';
import { createRefusalEpisode } from './refusal-episode.js';

export type { UpstreamAuthorizer } from './authorizer.js';

/** Each cloud provider's authorizer, made on its first call and kept: its credentials are loaded once and shared by its calls. */
export interface UpstreamAuthorizers {
  /** Undefined for a provider that takes a static key in a header. */
  of(provider: ProviderConfig): UpstreamAuthorizer | undefined;
}

export function createUpstreamAuthorizers(log: Logger, nowMs: NowMs): UpstreamAuthorizers {
  const made = new WeakMap<ProviderConfig, UpstreamAuthorizer>();
  return {
    of(provider) {
      if (!provider.bedrock) return undefined;
      let auth = made.get(provider);
      if (!auth) {
        const episode = createRefusalEpisode(provider.name, log);
        auth = provider.api_key
          ? createBedrockApiKeyAuthorizer(provider.api_key, episode)
          : createAwsSigV4Authorizer({
              region: provider.bedrock.region,
              credentials: createAwsCredentialSource({ provider: provider.name, load: standardAwsChain(), nowMs, log }),
              nowMs,
              episode,
            });
        made.set(provider, auth);
      }
      return auth;
    },
  };
}

/** What goes in a provider call's auth header: the provider's key, or its cloud's current token. */
export interface UpstreamAuth {
  /** The key (at once) or a token (minted, cached, refreshed); a token that cannot be had is a 503 AppError naming the provider. */
  secretFor(provider: ProviderConfig): string | Promise<string>;
}

/** A provider that signs in to its cloud: its calls carry a token that changes, never the same secret for long. */
export function signsIn(p: ProviderConfig): boolean {
  return p.vertex !== undefined || p.azure_ad !== undefined;
}

/**
 * One token source per cloud-signed provider, made on its first call (so a
 * provider never called never loads its cloud's library), kept for the
 * proxy's life.
 */
export function createUpstreamAuth(env: NodeJS.ProcessEnv, log: Logger): UpstreamAuth {
  const sources = new Map<string, BearerTokenSource>();
  function sourceOf(p: ProviderConfig): BearerTokenSource | undefined {
    if (!signsIn(p)) return undefined;
    let source = sources.get(p.name);
    if (source === undefined) {
      source =
        p.vertex !== undefined
          ? createGoogleToken({ provider: p.name, env, log })
          : createEntraToken({ provider: p.name, settings: { ...p.azure_ad!, authority_url: p.authority_url }, env, log });
      sources.set(p.name, source);
    }
    return source;
  }
  return {
    secretFor(p) {
      const source = sourceOf(p);
      return source === undefined ? (p.api_key ?? '') : source.token();
    },
  };
}
