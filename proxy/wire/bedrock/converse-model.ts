import type { ModelConfig, ProviderConfig } from '../../../shared/models.js';

/**
 * Which of a Bedrock provider's models are called through Converse: every
 * model but Anthropic's (`anthropic.…`, or an inference profile such as
 * `us.anthropic.…` / `global.anthropic.…`, or an ARN naming one), which
 * take InvokeModel with a Messages body.
 */
const ANTHROPIC = /(^|[.:/])anthropic\./;

export function isConverseModel(provider: ProviderConfig, model: ModelConfig): boolean {
  return provider.bedrock !== undefined && !ANTHROPIC.test(model.upstream_model);
}

/**
 * The provider as a Converse model sees it: a Chat endpoint at Bedrock's
 * host, so calls are translated to Chat (the pivot) and the attempt makes
 * them Converse calls (attempt.ts). Made per call: a shallow copy costs
 * less than a microsecond beside the translation it precedes, and keeps no
 * state outside the provider's owner.
 */
export function providerForModel(provider: ProviderConfig, model: ModelConfig): ProviderConfig {
  if (!isConverseModel(provider, model)) return provider;
  return { ...provider, endpoints: { chat: provider.endpoints.messages } };
}
