import type { ModelConfig } from '../../shared/models.js';

/**
 * Money on the data plane is integer micro-dollars. Prices are turned into
 * integer nano-dollars per token once (exact for prices with up to three
 * decimals per million tokens), so no float drift can let spend creep past a
 * budget; a cost is rounded up to the next micro-dollar.
 */
export function nanosPerToken(usdPerMtok: number): number {
  return Math.round(usdPerMtok * 1000);
}

export function costMicros(model: ModelConfig, inputTokens: number, outputTokens: number): number {
  const nanos = inputTokens * nanosPerToken(model.input_usd_per_mtok) + outputTokens * nanosPerToken(model.output_usd_per_mtok);
  return Math.ceil(nanos / 1000);
}

/**
 * A deliberately high estimate of the prompt's tokens, taken from the size of
 * the request body before any upstream answer: real tokenizers average about
 * four characters per token, and the JSON around the text only adds bytes.
 */
export function estimateInputTokens(bodyBytes: number): number {
  return Math.max(1, Math.ceil(bodyBytes / 3));
}
