import { AppError, invalidInput } from '../../shared/errors.js';
import type { ModelConfig, ProviderConfig } from '../../shared/models.js';
import type { ParsedCall } from '../call.js';
import { parseModelBody } from './parse.js';
import { providerEndpoint, type UpstreamCall } from './upstream.js';
import { WIRE } from './registry.js';

/**
 * `POST /v1/embeddings` (OpenAI's shape): `model` and `input` are checked,
 * the rest goes to the provider as sent. An embedding has no output tokens,
 * so the call's output ceiling is zero and its hold is its input alone.
 */
export function parseEmbeddings(raw: Buffer): ParsedCall {
  const body = parseModelBody(raw);
  const input = body.input;
  if (typeof input !== 'string' && !(Array.isArray(input) && input.length > 0)) {
    throw invalidInput('input: a string or a non-empty array of strings or token arrays is required.');
  }
  return { alias: body.model, stream: false, maxTokens: 0, choices: 1, body, raw };
}

/**
 * The provider's embeddings endpoint: its Chat Completions base + `/embeddings`
 * (OpenAI's layout, which the compatible providers share). A provider that
 * speaks only Messages has none: Anthropic's API offers no embeddings.
 */
export function embeddingsCall(call: ParsedCall, model: ModelConfig, provider: ProviderConfig): UpstreamCall {
  const base = provider.endpoints.chat?.base_url;
  if (base === undefined) {
    throw new AppError(
      'invalid_input',
      `model: "${model.alias}" is served by a provider that speaks only the Messages format, which has no embeddings endpoint.`,
      { code: 'unsupported_model' },
    );
  }
  const url = providerEndpoint(base, '/embeddings');
  return {
    origin: url.origin,
    path: `${url.path}${url.query}`,
    body: Buffer.from(JSON.stringify({ ...call.body, model: model.upstream_model })),
    authHeader: provider.endpoints.chat?.auth_header ?? WIRE.chat.provider.authHeader,
    dropUsageChunk: false,
    format: 'chat',
    translate: undefined,
    dropped: [],
    extraHeaders: provider.extra_headers,
  };
}
