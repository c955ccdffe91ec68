import type { ModelConfig, ProviderConfig } from '../../../shared/models.js';

/** The body version Vertex AI takes for Anthropic's models, in place of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/**
 * A Messages call as Vertex AI takes it for Anthropic's models: the model in
 * the path (`{model}:rawPredict`, `:streamRawPredict` for a stream), not in
 * the body, and `anthropic_version` in the body. `request` is the Messages
 * body the call would send Anthropic; the provider's Messages endpoint is
 * the project's `…/publishers/anthropic/models` (shared/models.ts).
 */
export function toVertexCall<T extends { origin: string; path: string; body: Buffer }>(
  up: T,
  request: Record<string, unknown>,
  model: ModelConfig,
  provider: ProviderConfig,
  action: 'call' | 'count',
): T {
  const base = new URL(provider.endpoints.messages!.base_url);
  const { model: _model, ...rest } = request;
  const method =
    action === 'count' ? 'count-tokens:rawPredict' : `${model.upstream_model}:${request.stream === true ? 'streamRawPredict' : 'rawPredict'}`;
  // count-tokens takes the model in the body: its path names no model.
  const body = action === 'count' ? { ...rest, model: model.upstream_model } : rest;
  return {
    ...up,
    origin: base.origin,
    path: `${base.pathname.replace(/\/+$/, '')}/${method}`,
    body: Buffer.from(JSON.stringify({ ...body, anthropic_version: VERTEX_ANTHROPIC_VERSION })),
  };
}
