import type { ModelConfig, ProviderConfig } from '../../../shared/models.js';

/** The body version Vertex AI takes for Anthropic's models, in place of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** A provider request as planned (wire/upstream.ts): where it goes, in which format, with which bytes. */
interface PlannedRequest {
  origin: string;
  path: string;
  body: Buffer;
  format: string;
}

/** The path under a publisher's `…/models` endpoint: `{base}/{method}`. */
function pathUnder(provider: ProviderConfig, endpoint: 'messages' | 'gemini', method: string): { origin: string; path: string } {
  const base = new URL(provider.endpoints[endpoint]!.base_url);
  return { origin: base.origin, path: `${base.pathname.replace(/\/+$/, '')}/${method}` };
}

/**
 * A Gemini call as Vertex AI takes it for Google's models: the body as the
 * Gemini API's (the model is in the path there too), at
 * `…/publishers/google/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` (read as SSE like Google's own) or
 * `:countTokens`, with the OAuth token and no API key.
 */
function geminiOnVertex<T extends PlannedRequest>(up: T, model: ModelConfig, provider: ProviderConfig, stream: boolean, action: 'call' | 'count'): T {
  const method = action === 'count' ? 'countTokens' : stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return { ...up, ...pathUnder(provider, 'gemini', `${model.upstream_model}:${method}`) };
}

/**
 * A Messages call as Vertex AI takes it for Anthropic's models: the model in
 * the path (`{model}:rawPredict`, `:streamRawPredict` for a stream), not in
 * the body, and `anthropic_version` in the body. `request` is the Messages
 * body the call would send Anthropic.
 */
function messagesOnVertex<T extends PlannedRequest>(
  up: T,
  request: Record<string, unknown>,
  model: ModelConfig,
  provider: ProviderConfig,
  action: 'call' | 'count',
): T {
  const { model: _model, ...rest } = request;
  const method =
    action === 'count' ? 'count-tokens:rawPredict' : `${model.upstream_model}:${request.stream === true ? 'streamRawPredict' : 'rawPredict'}`;
  // count-tokens takes the model in the body: its path names no model.
  const body = action === 'count' ? { ...rest, model: model.upstream_model } : rest;
  return {
    ...up,
    ...pathUnder(provider, 'messages', method),
    body: Buffer.from(JSON.stringify({ ...body, anthropic_version: VERTEX_ANTHROPIC_VERSION })),
  };
}

/**
 * A planned call (or count) on a Vertex provider, at the path of its
 * model's publisher (publisher.ts): Gemini's bytes go as planned; a
 * Messages body is read back (`request()`) for its rawPredict shape.
 */
export function toVertexCall<T extends PlannedRequest>(
  up: T,
  request: () => Record<string, unknown>,
  model: ModelConfig,
  provider: ProviderConfig,
  action: 'call' | 'count',
  stream: boolean,
): T {
  if (up.format === 'gemini') return geminiOnVertex(up, model, provider, stream, action);
  return messagesOnVertex(up, request(), model, provider, action);
}
