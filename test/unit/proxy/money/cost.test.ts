import { expect } from 'chai';
import fc from 'fast-check';
import { costMicros, estimateInputTokens } from '../../../../proxy/money/cost.js';
import { modelFromEntry, type ModelConfig } from '../../../../shared/models.js';

const model = (input: number, output: number): ModelConfig =>
  modelFromEntry({
    alias: 'tg/x',
    provider: 'p',
    upstream_model: 'x',
    input_usd_per_mtok: input,
    output_usd_per_mtok: output,
    max_output_tokens: 1000,
  });

describe('proxy: money in integer micro-dollars', () => {
  it('prices fractional per-million rates without float drift', () => {
    // 0.15 * 1000 is 150.00000000000003 in floating point; the bill must be 150.
    expect(costMicros(model(0.15, 0.6), 1000, 0)).to.equal(150);
    expect(costMicros(model(0.15, 0.6), 1000, 1000)).to.equal(750);
    expect(costMicros(model(3, 15), 6, 12)).to.equal(198);
  });

  it('rounds a part of a micro-dollar up, never down', () => {
    expect(costMicros(model(0.15, 0.6), 1, 0)).to.equal(1);
    expect(costMicros(model(0.15, 0.6), 7, 0)).to.equal(2);
  });

  it('is additive up to rounding: n calls never cost less than one call of the summed tokens', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(5000), fc.nat(5000)), { minLength: 1, maxLength: 20 }), (calls) => {
        const m = model(0.15, 0.6);
        const each = calls.reduce((s, [i, o]) => s + costMicros(m, i, o), 0);
        const whole = costMicros(
          m,
          calls.reduce((s, [i]) => s + i, 0),
          calls.reduce((s, [, o]) => s + o, 0),
        );
        expect(Number.isInteger(each)).to.equal(true);
        expect(each).to.be.at.least(whole);
      }),
    );
  });

  it('estimates input from the body size, at least one token', () => {
    expect(estimateInputTokens(0)).to.equal(1);
    expect(estimateInputTokens(400)).to.equal(134);
  });
});
