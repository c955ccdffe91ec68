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

/** One view per provider entry, made once. */
const views = new WeakMap<ProviderConfig, ProviderConfig>();

/**
 * The provider as a Converse model sees it: a Chat endpoint at Bedrock's
 * host, so calls are translated to Chat (the pivot) and the attempt makes
 * them Converse calls (attempt.ts).
 */
export function providerForModel(provider: ProviderConfig, model: ModelConfig): ProviderConfig {
  if (!isConverseModel(provider, model)) return provider;
  let view = views.get(provider);
  if (!view) {
    view = { ...provider, endpoints: { chat: provider.endpoints.messages } };
    views.set(provider, view);
  }
  return view;
}
