import type { ModelConfig, ProviderConfig } from '../../../shared/models.js';

/**
 * Which publisher's API a Vertex AI model is called through, read from its
 * id as Bedrock's are (bedrock/converse-model.ts): Google's own models
 * (`gemini-…`) in the Gemini format at `publishers/google`, every other one
 * (`claude-…`) in Anthropic's Messages format at `publishers/anthropic`.
 * The two families' ids never overlap, so the models file needs no field
 * for it.
 */
const GOOGLE = /^gemini-/;

function isVertexGemini(model: ModelConfig): boolean {
  return GOOGLE.test(model.upstream_model);
}

/** One view per provider entry and publisher, made once. */
const views = new WeakMap<ProviderConfig, { google: ProviderConfig; anthropic: ProviderConfig }>();

/**
 * A Vertex provider as one of its models sees it: only its publisher's
 * endpoint, so a client in the other format is translated to the one the
 * model takes (a Gemini client of a Claude model through the pivot, and
 * the other way round). Any other provider is returned as it is.
 */
export function vertexProviderFor(provider: ProviderConfig, model: ModelConfig): ProviderConfig {
  if (provider.vertex === undefined) return provider;
  let view = views.get(provider);
  if (!view) {
    view = {
      google: { ...provider, endpoints: { gemini: provider.endpoints.gemini } },
      anthropic: { ...provider, endpoints: { messages: provider.endpoints.messages } },
    };
    views.set(provider, view);
  }
  return isVertexGemini(model) ? view.google : view.anthropic;
}
