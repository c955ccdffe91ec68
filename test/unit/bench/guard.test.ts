import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  GUARD_RATIOS,
  guardFailed,
  guardBaselineSchema,
  guardRatios,
  guardScore,
  guardSpread,
  judgeGuard,
  judgeScore,
  type GuardBaseline,
  type GuardRatio,
  type GuardRound,
} from '../../../bench/lib/guard.js';

const each = (v: number) => Object.fromEntries(GUARD_RATIOS.map((r) => [r, v])) as Record<GuardRatio, number>;

function round(floorChat: number, floorMessages: number, tollgate: Partial<Record<GuardRatio, number>>): GuardRound {
  return { floor: { chat: floorChat, messages: floorMessages }, tollgate: { ...each(200), ...tollgate } };
}

const baseline: GuardBaseline = { why: 'test', ratios: each(2), tolerance: each(0.1), combined: { ratio: 2, tolerance: 0.1 } };
const judged = (m: Record<GuardRatio, number>) => guardFailed(judgeGuard(m, baseline), judgeScore(guardScore(m), baseline));

describe('bench guard', () => {
  it('sets the least CPU per call Tollgate reached against the least the floor reached, per client format', () => {
    const m = guardRatios([
      round(100, 50, { chat: 220, messages: 100, 'messages translated': 150, 'tree chat': 400 }),
      // A loaded round: everything costlier, floor included; it sets no minimum.
      round(200, 100, { chat: 400, messages: 200, 'messages translated': 300, 'tree chat': 800 }),
      // Tollgate's quietest Chat round need not be the floor's.
      round(110, 60, { chat: 200, messages: 900, 'messages translated': 900, 'tree chat': 900 }),
    ]);
    expect(m.chat).to.equal(2);
    expect(m.messages).to.equal(2);
    expect(m['messages translated']).to.equal(3);
    expect(m['tree chat']).to.equal(4);
  });

  it('scores the proxy as the geometric mean of its four ratios, leaving the tree out', () => {
    const score = guardScore({ chat: 1, messages: 4, 'chat translated': 2, 'messages translated': 2, 'tree chat': 1000 });
    expect(score).to.be.closeTo(2, 1e-12);
  });

  it('refuses to judge a run that measured nothing', () => {
    expect(() => guardRatios([])).to.throw(/no rounds/);
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
    expect(judged(each(2 * 1.15))).to.equal(true);
  });

  it('fails a run when two ratios exceed their limits, not when one alone does (load on one measurement)', () => {
    expect(judged({ ...each(2), chat: 2.3 })).to.equal(false);
    // A slip in the Messages path shows passed through and translated.
    expect(judged({ ...each(2), messages: 2.3, 'messages translated': 2.3 })).to.equal(true);
  });

  it('fails a run whose combined score is over even when no single ratio is', () => {
    // Each ratio 9 % up, within its 10 %; the score's own tolerance is narrower.
    const narrow: GuardBaseline = { ...baseline, combined: { ratio: 2, tolerance: 0.05 } };
    const m = each(2 * 1.09);
    expect(judgeGuard(m, narrow).some((v) => v.exceeded)).to.equal(false);
    expect(guardFailed(judgeGuard(m, narrow), judgeScore(guardScore(m), narrow))).to.equal(true);
  });

  it('fails a run with a ratio it could not compute, even alone', () => {
    expect(judged({ ...each(2), 'tree chat': NaN })).to.equal(true);
  });

  it('measures the spread as (max − min) ÷ median over runs, recomputed from their rounds', () => {
    const run = (chat: number) => [round(100, 100, { ...each(200), chat })];
    const spreads = guardSpread([run(200), run(220), run(190)]);
    const chat = spreads.find((s) => s.ratio === 'chat')!;
    expect(chat).to.include({ min: 1.9, median: 2, max: 2.2 });
    expect(chat.spread).to.be.closeTo(0.15, 1e-12);
    expect(spreads.map((s) => s.ratio)).to.include('combined');
    expect(() => guardSpread([run(200)])).to.throw(/two runs/);
  });

  it('keeps a committed baseline that the guard can read', () => {
    const committed = guardBaselineSchema.parse(JSON.parse(readFileSync(new URL('../../../bench/guard-baseline.json', import.meta.url), 'utf8')));
    expect(Object.keys(committed.ratios).sort()).to.deep.equal([...GUARD_RATIOS].sort());
  });
});
