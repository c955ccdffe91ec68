import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  GUARD_RATIOS,
  guardFailed,
  guardBaselineSchema,
  guardMedians,
  guardSpread,
  judgeGuard,
  type GuardBaseline,
  type GuardRatio,
  type GuardRound,
} from '../../../bench/lib/guard.js';

const each = (v: number) => Object.fromEntries(GUARD_RATIOS.map((r) => [r, v])) as Record<GuardRatio, number>;

function round(floorChat: number, floorMessages: number, tollgate: Partial<Record<GuardRatio, number>>): GuardRound {
  return { floor: { chat: floorChat, messages: floorMessages }, tollgate: { ...each(200), ...tollgate } };
}

const baseline: GuardBaseline = { why: 'test', ratios: each(2), tolerance: each(0.1) };

describe('bench guard', () => {
  it('takes each ratio within its round, against the floor of the client format, then the median over rounds', () => {
    const m = guardMedians([
      round(100, 50, { chat: 200, messages: 100, 'messages translated': 150, 'tree chat': 400 }),
      // A slow round: floor and Tollgate both doubled, so its ratios are unchanged.
      round(200, 100, { chat: 400, messages: 200, 'messages translated': 300, 'tree chat': 800 }),
      // An outlier round whose Tollgate alone ran slow: the median ignores it.
      round(100, 50, { chat: 900, messages: 900, 'messages translated': 900, 'tree chat': 900 }),
    ]);
    expect(m.chat).to.equal(2);
    expect(m.messages).to.equal(2);
    expect(m['messages translated']).to.equal(3);
    expect(m['tree chat']).to.equal(4);
  });

  it('averages the middle two rounds of an even count', () => {
    const m = guardMedians([
      round(100, 100, { chat: 100 }),
      round(100, 100, { chat: 200 }),
      round(100, 100, { chat: 300 }),
      round(100, 100, { chat: 900 }),
    ]);
    expect(m.chat).to.equal(2.5);
  });

  it('refuses to judge a run that measured nothing', () => {
    expect(() => guardMedians([])).to.throw(/no rounds/);
  });

  it('passes a ratio at its limit and fails one beyond it, naming which', () => {
    const verdicts = judgeGuard({ ...each(2), chat: 2.2, messages: 2.21 }, baseline);
    expect(verdicts.find((v) => v.ratio === 'chat')).to.include({ exceeded: false });
    expect(verdicts.find((v) => v.ratio === 'messages')).to.include({ exceeded: true });
    expect(verdicts.filter((v) => v.exceeded).map((v) => v.ratio)).to.deep.equal(['messages']);
    expect(verdicts[0]!.limit).to.be.closeTo(2.2, 1e-12);
  });

  it('fails a ratio that could not be computed rather than passing it', () => {
    const verdicts = judgeGuard({ ...each(2), 'tree chat': NaN }, baseline);
    expect(verdicts.find((v) => v.ratio === 'tree chat')).to.include({ exceeded: true });
  });

  it('catches a 15 % regression when the spread is below it', () => {
    const verdicts = judgeGuard(each(2 * 1.15), baseline);
    expect(verdicts.every((v) => v.exceeded)).to.equal(true);
    expect(guardFailed(verdicts)).to.equal(true);
  });

  it('fails a run when two ratios exceed their limits, not when one alone does (load on one measurement)', () => {
    expect(guardFailed(judgeGuard({ ...each(2), chat: 2.3 }, baseline))).to.equal(false);
    // A slip in the Messages path shows passed through and translated.
    expect(guardFailed(judgeGuard({ ...each(2), messages: 2.3, 'messages translated': 2.3 }, baseline))).to.equal(true);
  });

  it('fails a run with a ratio it could not compute, even alone', () => {
    expect(guardFailed(judgeGuard({ ...each(2), 'tree chat': NaN }, baseline))).to.equal(true);
  });

  it('measures the spread as (max − min) ÷ median over runs', () => {
    const [chat] = guardSpread([each(2), each(2.2), each(1.9)]);
    expect(chat).to.include({ ratio: 'chat', min: 1.9, median: 2, max: 2.2 });
    expect(chat!.spread).to.be.closeTo(0.15, 1e-12);
    expect(() => guardSpread([each(2)])).to.throw(/two runs/);
  });

  it('keeps a committed baseline that the guard can read', () => {
    const committed = guardBaselineSchema.parse(JSON.parse(readFileSync(new URL('../../../bench/guard-baseline.json', import.meta.url), 'utf8')));
    expect(Object.keys(committed.ratios).sort()).to.deep.equal([...GUARD_RATIOS].sort());
  });
});
