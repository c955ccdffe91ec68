import { expect } from 'chai';
import fc from 'fast-check';
import { femtosToMicrosCeil, femtosToUsdText, FEMTOS_PER_MICRO } from '../../../shared/money-units.js';
import { priceUsage, usdToMicros, type ModelPrices, type PricedUsage } from '../../../shared/pricing.js';
import { WIRE_FORMATS, type WireFormat } from '../../../shared/wire-formats.js';

const none: PricedUsage = { inputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 0, webSearchRequests: 0 };
const sonnet: ModelPrices = { input_usd_per_mtok: 3, output_usd_per_mtok: 15 };
const micros = (n: number) => BigInt(n) * FEMTOS_PER_MICRO;

describe('priceUsage: exact cost at a model’s prices', () => {
  it('prices the cached Messages answer of the issue at 41,325 µ$, not 255,075', () => {
    const usage = { ...none, inputTokens: 2000, cacheWrite5mTokens: 3000, cacheReadTokens: 80000, outputTokens: 5 };
    const { costFemtos, savedFemtos } = priceUsage(usage, sonnet, 'messages');
    expect(costFemtos).to.equal(micros(41_325));
    // All 85,000 prompt tokens at $3 plus the output: 255,075 µ$.
    expect(savedFemtos).to.equal(micros(255_075 - 41_325));
  });

  it('keeps a derived price of 1.25 × $0.15 = $0.1875 per million exact', () => {
    const { costFemtos } = priceUsage({ ...none, cacheWrite5mTokens: 1 }, { input_usd_per_mtok: 0.15, output_usd_per_mtok: 0.6 }, 'messages');
    expect(costFemtos).to.equal(187_500_000n); // $0.1875 / 1e6 per token = 1.875e-7 USD
    expect(femtosToUsdText(costFemtos)).to.equal('0.000000187500000');
    const million = priceUsage({ ...none, cacheWrite5mTokens: 1_000_000 }, { input_usd_per_mtok: 0.15, output_usd_per_mtok: 0.6 }, 'messages');
    expect(femtosToUsdText(million.costFemtos)).to.equal('0.187500000000000');
  });

  it('defaults cache reads to 0.1 × input for Messages usage and to the input price for Chat and Responses', () => {
    const reads = { ...none, cacheReadTokens: 1_000_000 };
    expect(priceUsage(reads, sonnet, 'messages').costFemtos).to.equal(micros(300_000));
    expect(priceUsage(reads, sonnet, 'chat').costFemtos).to.equal(micros(3_000_000));
    expect(priceUsage(reads, sonnet, 'responses').costFemtos).to.equal(micros(3_000_000));
    expect(priceUsage(reads, sonnet, 'chat').savedFemtos).to.equal(0n);
  });

  it('defaults 1-hour writes to 2 × input and web searches to $0.01', () => {
    expect(priceUsage({ ...none, cacheWrite1hTokens: 1_000_000 }, sonnet, 'messages').costFemtos).to.equal(micros(6_000_000));
    expect(priceUsage({ ...none, webSearchRequests: 3 }, sonnet, 'messages').costFemtos).to.equal(micros(30_000));
  });

  it('uses explicit prices when the models file gives them', () => {
    const prices: ModelPrices = {
      ...sonnet,
      cache_read_usd_per_mtok: 0.75,
      cache_write_usd_per_mtok: 4,
      cache_write_1h_usd_per_mtok: 5.5,
      web_search_usd_per_request: 0.025,
    };
    const usage = { inputTokens: 1, cacheReadTokens: 2, cacheWrite5mTokens: 3, cacheWrite1hTokens: 4, outputTokens: 5, webSearchRequests: 6 };
    // picodollars per token = µ$ per Mtok: 3 + 2·0.75 + 3·4 + 4·5.5 + 5·15 µ$ … in pico, plus 6 × $0.025.
    const pico = 3_000_000n + 2n * 750_000n + 3n * 4_000_000n + 4n * 5_500_000n + 5n * 15_000_000n;
    expect(priceUsage(usage, prices, 'chat').costFemtos).to.equal(pico * 1000n + 6n * micros(25_000));
    // Saved: every prompt token at $3 instead.
    expect(priceUsage(usage, prices, 'chat').savedFemtos).to.equal(
      (10n * 3_000_000n - (3_000_000n + 1_500_000n + 12_000_000n + 22_000_000n)) * 1000n,
    );
  });

  it('refuses a price with more than six decimals or a negative count rather than round', () => {
    expect(() => usdToMicros(0.0000001, 'p')).to.throw(RangeError, /six decimals/);
    expect(() => priceUsage({ ...none, outputTokens: -1 }, sonnet, 'chat')).to.throw(RangeError);
    expect(() => priceUsage({ ...none, outputTokens: 1.5 }, sonnet, 'chat')).to.throw(RangeError);
  });

  it('rounds a femto amount up to whole micro-dollars for a hold', () => {
    expect(femtosToMicrosCeil(0n)).to.equal(0n);
    expect(femtosToMicrosCeil(1n)).to.equal(1n);
    expect(femtosToMicrosCeil(FEMTOS_PER_MICRO)).to.equal(1n);
    expect(femtosToMicrosCeil(FEMTOS_PER_MICRO + 1n)).to.equal(2n);
    expect(femtosToUsdText(-1n)).to.equal('-0.000000000000001');
  });

  describe('properties', () => {
    const price = fc.integer({ min: 0, max: 1_000_000_000 }).map((m) => m / 1e6); // six decimals, up to $1000
    const tokens = fc.integer({ min: 0, max: 10_000_000 });
    const usageArb = fc.record({
      inputTokens: tokens,
      cacheReadTokens: tokens,
      cacheWrite5mTokens: tokens,
      cacheWrite1hTokens: tokens,
      outputTokens: tokens,
      webSearchRequests: fc.integer({ min: 0, max: 1000 }),
    });
    const pricesArb = fc.record(
      {
        input_usd_per_mtok: price,
        output_usd_per_mtok: price,
        cache_read_usd_per_mtok: price,
        cache_write_usd_per_mtok: price,
        cache_write_1h_usd_per_mtok: price,
        web_search_usd_per_request: price,
      },
      { requiredKeys: ['input_usd_per_mtok', 'output_usd_per_mtok'] },
    );
    const formatArb = fc.constantFrom<WireFormat>(...WIRE_FORMATS);

    it('is additive: a call split in two costs the sum of the halves, to the femtodollar', () => {
      fc.assert(
        fc.property(usageArb, usageArb, pricesArb, formatArb, (a, b, prices, format) => {
          const sum = {
            inputTokens: a.inputTokens + b.inputTokens,
            cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
            cacheWrite5mTokens: a.cacheWrite5mTokens + b.cacheWrite5mTokens,
            cacheWrite1hTokens: a.cacheWrite1hTokens + b.cacheWrite1hTokens,
            outputTokens: a.outputTokens + b.outputTokens,
            webSearchRequests: a.webSearchRequests + b.webSearchRequests,
          };
          const whole = priceUsage(sum, prices, format);
          const halves = [priceUsage(a, prices, format), priceUsage(b, prices, format)];
          expect(whole.costFemtos).to.equal(halves[0]!.costFemtos + halves[1]!.costFemtos);
          expect(whole.savedFemtos).to.equal(halves[0]!.savedFemtos + halves[1]!.savedFemtos);
        }),
      );
    });

    it('matches the price sheet computed in decimal µ$ for defaults, and never bills cache reads above input by default', () => {
      fc.assert(
        fc.property(usageArb, price, price, formatArb, (u, input, output, format) => {
          const { costFemtos, savedFemtos } = priceUsage(u, { input_usd_per_mtok: input, output_usd_per_mtok: output }, format);
          // In units of 1e-8 µ$ per Mtok × tokens = femtos / 10: multipliers in hundredths of the µ$/Mtok price.
          const inMicro = BigInt(Math.round(input * 1e6));
          const outMicro = BigInt(Math.round(output * 1e6));
          const readH = format === 'messages' ? 10n : 100n;
          const expected =
            (BigInt(u.inputTokens) * 100n * inMicro +
              BigInt(u.cacheReadTokens) * readH * inMicro +
              BigInt(u.cacheWrite5mTokens) * 125n * inMicro +
              BigInt(u.cacheWrite1hTokens) * 200n * inMicro +
              BigInt(u.outputTokens) * 100n * outMicro) *
              10n +
            BigInt(u.webSearchRequests) * micros(10_000);
          expect(costFemtos).to.equal(expected);
          expect(costFemtos >= 0n).to.equal(true);
          // Reads only ever save; writes only ever cost more.
          if (u.cacheWrite5mTokens === 0 && u.cacheWrite1hTokens === 0) expect(savedFemtos >= 0n).to.equal(true);
          if (u.cacheReadTokens === 0) expect(savedFemtos <= 0n).to.equal(true);
        }),
      );
    });
  });
});
