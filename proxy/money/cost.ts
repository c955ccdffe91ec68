import { femtosToMicrosCeil } from '../../shared/money-units.js';
import type { ModelConfig } from '../../shared/models.js';
import { priceAtRates, priceRates, type ModelPrices, type PriceRates } from '../../shared/pricing.js';
import type { WireFormat } from '../../shared/wire-formats.js';
import type { Usage } from '../call.js';

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

/** What one call costs at its model's prices, exactly, and in the micro-dollars holds count in. */
export interface CallCost {
  costFemtos: bigint;
  savedFemtos: bigint;
  /** The cost rounded up to whole micro-dollars: what the call's hold becomes once it ended. */
  costMicros: number;
}

/** The models file's prices (kept in µ$ per million tokens) in the price sheet's USD terms. */
function sheetOf(model: ModelConfig): ModelPrices {
  const usd = (micros: number | undefined) => (micros === undefined ? undefined : micros / 1e6);
  const p = model.prices;
  return {
    input_usd_per_mtok: p.input / 1e6,
    output_usd_per_mtok: p.output / 1e6,
    cache_read_usd_per_mtok: usd(p.cache_read),
    cache_write_usd_per_mtok: usd(p.cache_write),
    cache_write_1h_usd_per_mtok: usd(p.cache_write_1h),
    web_search_usd_per_request: usd(p.web_search_per_request),
  };
}

/**
 * A model's rates per format, made on its first settled call: turning its
 * prices into exact per-token rates is a dozen BigInt operations that every
 * settled call would otherwise repeat. Keyed by the model object, so a
 * reloaded models file gets rates of its own.
 */
const ratesByModel = new WeakMap<ModelConfig, Partial<Record<WireFormat, PriceRates>>>();

function ratesOf(model: ModelConfig, format: WireFormat): PriceRates {
  let byFormat = ratesByModel.get(model);
  if (!byFormat) ratesByModel.set(model, (byFormat = {}));
  return (byFormat[format] ??= priceRates(sheetOf(model), format));
}

/** A count a provider reported, as a whole non-negative number (pricing refuses anything else). */
const whole = (n: number): number => (Number.isSafeInteger(n) && n > 0 ? n : Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/**
 * Exact cost of a call's usage (shared/pricing.ts), `format` being the one
 * the provider reported it in: the default price of cache reads depends on it.
 */
export function callCost(model: ModelConfig, usage: Usage, format: WireFormat): CallCost {
  const { costFemtos, savedFemtos } = priceAtRates(
    {
      inputTokens: whole(usage.inputTokens),
      cacheReadTokens: whole(usage.cacheReadTokens),
      cacheWrite5mTokens: whole(usage.cacheWrite5mTokens),
      cacheWrite1hTokens: whole(usage.cacheWrite1hTokens),
      outputTokens: whole(usage.outputTokens),
      webSearchRequests: whole(usage.webSearchRequests),
    },
    ratesOf(model, format),
  );
  return { costFemtos, savedFemtos, costMicros: Number(femtosToMicrosCeil(costFemtos)) };
}
