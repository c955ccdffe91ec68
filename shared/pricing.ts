import { FEMTOS_PER_MICRO } from './money-units.js';
import { WIRE_FORMAT_FACTS, type WireFormat } from './wire-formats.js';

/**
 * A call's usage, split the way providers price it. Every prompt token is in
 * exactly one of the first four fields (cache writes of either duration are
 * not also in `inputTokens`, cache reads are not either).
 */
export interface PricedUsage {
  /** Prompt tokens neither read from nor written to a cache. */
  inputTokens: number;
  cacheReadTokens: number;
  /** Prompt tokens written to a 5-minute cache. */
  cacheWrite5mTokens: number;
  /** Prompt tokens written to a 1-hour cache. */
  cacheWrite1hTokens: number;
  /** Output, reasoning tokens included. */
  outputTokens: number;
  /** Server-side web searches the provider ran. */
  webSearchRequests: number;
}

/** A model's prices as the models file gives them (USD per million tokens, USD per search); absent = undefined. */
export interface ModelPrices {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cache_read_usd_per_mtok?: number | undefined;
  cache_write_usd_per_mtok?: number | undefined;
  cache_write_1h_usd_per_mtok?: number | undefined;
  web_search_usd_per_request?: number | undefined;
}

export interface CallCost {
  /** What the call costs, femtodollars. */
  costFemtos: bigint;
  /**
   * What caching saved: the cost with every prompt token at the input price,
   * minus `costFemtos`. Negative when a call wrote more to the cache than it
   * read (writes cost more than input).
   */
  savedFemtos: bigint;
}

/** Default multipliers of the input price, in hundredths, so derived prices stay integers. */
const HUNDREDTHS = { cacheWrite5m: 125n, cacheWrite1h: 200n } as const;
const DEFAULT_WEB_SEARCH_MICROS = 10_000n; // $0.01

/**
 * A USD figure with at most six decimals as whole micro-dollars. A price with
 * more decimals cannot be billed exactly, so it is refused rather than
 * rounded (the models file check reports it at start).
 */
export function usdToMicros(usd: number, what: string): bigint {
  const scaled = usd * 1e6;
  const micros = Math.round(scaled);
  if (!Number.isFinite(usd) || usd < 0 || Math.abs(scaled - micros) > 1e-6 * Math.max(1, Math.abs(scaled)) || !Number.isSafeInteger(micros)) {
    throw new RangeError(`${what}: ${usd} is not a non-negative USD amount with at most six decimals`);
  }
  return BigInt(micros);
}

/**
 * Femtodollars per token of a price in USD per million tokens, times a
 * multiplier in hundredths: µ$/Mtok is picodollars per token, a thousand
 * femtodollars, and a hundredth of that is ten.
 */
function perToken(usdPerMtok: number, what: string, hundredths = 100n): bigint {
  return usdToMicros(usdPerMtok, what) * 10n * hundredths;
}

function count(n: number, what: string): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what}: ${n} is not a token or request count`);
  return BigInt(n);
}

/** A model's prices as femtodollars per token (per request for web searches), for usage in one format. */
export interface PriceRates {
  input: bigint;
  output: bigint;
  read: bigint;
  write5m: bigint;
  write1h: bigint;
  search: bigint;
}

/**
 * The per-token rates `priceUsage` bills at, with the defaults for absent
 * prices: cache reads at 0.1 × input for usage reported in the Messages
 * format and at the input price otherwise (Chat and Responses report cached
 * tokens without saying what they cost), 5-minute writes at 1.25 × input,
 * 1-hour writes at 2 × input, web searches at $0.01 each. A price that cannot
 * be billed exactly is a RangeError.
 */
export function priceRates(prices: ModelPrices, format: WireFormat): PriceRates {
  return {
    input: perToken(prices.input_usd_per_mtok, 'input_usd_per_mtok'),
    output: perToken(prices.output_usd_per_mtok, 'output_usd_per_mtok'),
    read:
      prices.cache_read_usd_per_mtok !== undefined
        ? perToken(prices.cache_read_usd_per_mtok, 'cache_read_usd_per_mtok')
        : perToken(prices.input_usd_per_mtok, 'input_usd_per_mtok', WIRE_FORMAT_FACTS[format].defaultCacheReadHundredths),
    write5m:
      prices.cache_write_usd_per_mtok !== undefined
        ? perToken(prices.cache_write_usd_per_mtok, 'cache_write_usd_per_mtok')
        : perToken(prices.input_usd_per_mtok, 'input_usd_per_mtok', HUNDREDTHS.cacheWrite5m),
    write1h:
      prices.cache_write_1h_usd_per_mtok !== undefined
        ? perToken(prices.cache_write_1h_usd_per_mtok, 'cache_write_1h_usd_per_mtok')
        : perToken(prices.input_usd_per_mtok, 'input_usd_per_mtok', HUNDREDTHS.cacheWrite1h),
    search:
      (prices.web_search_usd_per_request !== undefined
        ? usdToMicros(prices.web_search_usd_per_request, 'web_search_usd_per_request')
        : DEFAULT_WEB_SEARCH_MICROS) * FEMTOS_PER_MICRO,
  };
}

/** Exact cost of a call's usage at rates `priceRates` made (the proxy makes them once per model, not per call). */
export function priceAtRates(usage: PricedUsage, rates: PriceRates): CallCost {
  const uncached = count(usage.inputTokens, 'inputTokens');
  const reads = count(usage.cacheReadTokens, 'cacheReadTokens');
  const w5 = count(usage.cacheWrite5mTokens, 'cacheWrite5mTokens');
  const w1 = count(usage.cacheWrite1hTokens, 'cacheWrite1hTokens');
  const rest = count(usage.outputTokens, 'outputTokens') * rates.output + count(usage.webSearchRequests, 'webSearchRequests') * rates.search;

  const costFemtos = uncached * rates.input + reads * rates.read + w5 * rates.write5m + w1 * rates.write1h + rest;
  const fullInputFemtos = (uncached + reads + w5 + w1) * rates.input + rest;
  return { costFemtos, savedFemtos: fullInputFemtos - costFemtos };
}

/** Exact cost of a call at a model's prices (the defaults for absent prices are `priceRates`'). */
export function priceUsage(usage: PricedUsage, prices: ModelPrices, format: WireFormat): CallCost {
  return priceAtRates(usage, priceRates(prices, format));
}
