import type { NowMs } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { ProviderConfig } from '../../shared/models.js';
import { createAwsCredentialSource, standardAwsChain } from './aws-credentials.js';
import { createAwsSigV4Authorizer, createBedrockApiKeyAuthorizer } from './aws.js';
import type { UpstreamAuthorizer } from './authorizer.js';

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
        auth = provider.api_key
          ? createBedrockApiKeyAuthorizer(provider.api_key)
          : createAwsSigV4Authorizer({
              region: provider.bedrock.region,
              credentials: createAwsCredentialSource({ provider: provider.name, load: standardAwsChain(), nowMs, log }),
              nowMs,
            });
        made.set(provider, auth);
      }
      return auth;
    },
  };
}
