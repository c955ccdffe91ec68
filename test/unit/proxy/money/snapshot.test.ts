import { expect } from 'chai';
import { keyBudgetLeft, moneySnapshot } from '../../../../proxy/money/snapshot.js';

const JAN = Date.parse('2026-01-01T00:00:00Z');
const FEB = Date.parse('2026-02-01T00:00:00Z');
const DAY = 86_400_000;

describe('keyBudgetLeft: what is left of a key budget now, and the version that orders it', () => {
  const monthly = {
    key_remaining_micros: 0,
    key_version: 7,
    budget_micros: 5_000_000,
    budget_period: 'month' as const,
    period_start_ms: JAN,
    budget_day: 20_000,
  };

  it('a lifetime budget is the answer as it came, ordered by its row version within the day its budget was set', () => {
    const left = keyBudgetLeft(
      { key_remaining_micros: 1_234, key_version: 3, budget_micros: 5_000, budget_period: null, period_start_ms: null, budget_day: 10 },
      FEB,
    );
    expect(left).to.deep.equal({ remainingMicros: 1_234, version: 10 * 2 ** 32 + 3 });
  });

  it('no budget is null; an answer from before period budgets (no budget fields) is a lifetime budget', () => {
    expect(keyBudgetLeft({ key_remaining_micros: null, key_version: 4 }, FEB)).to.deep.equal({ remainingMicros: null, version: 4 });
    expect(keyBudgetLeft({ key_remaining_micros: 99, key_version: 4 }, FEB).remainingMicros).to.equal(99);
  });

  it("a period budget is the answer's figure within its period, and the whole budget once a later period began", () => {
    const inJan = keyBudgetLeft(monthly, FEB - 1);
    const inFeb = keyBudgetLeft(monthly, FEB);
    expect(inJan.remainingMicros).to.equal(0);
    expect(inFeb.remainingMicros).to.equal(5_000_000);
    // February's figure outranks any January figure, whatever its row version; a February settlement outranks the promoted cache.
    expect(inFeb.version).to.be.greaterThan(keyBudgetLeft({ ...monthly, key_version: 10_000 }, FEB - 1).version);
    expect(keyBudgetLeft({ ...monthly, key_remaining_micros: 4_000_000, key_version: 8, period_start_ms: FEB }, FEB).version).to.be.greaterThan(
      inFeb.version,
    );
  });

  it("a proxy clock behind the control plane's keeps the answer's own (later) period", () => {
    const febAnswer = { ...monthly, key_remaining_micros: 4_000_000, period_start_ms: FEB };
    expect(keyBudgetLeft(febAnswer, FEB - DAY)).to.deep.equal({ remainingMicros: 4_000_000, version: (FEB / DAY) * 2 ** 32 + 7 });
  });

  it('a change from a period budget back to a lifetime one on the same day outranks the period figure by its row version', () => {
    const day = FEB / DAY + 3;
    const period = keyBudgetLeft({ ...monthly, period_start_ms: FEB, budget_day: day - 1 }, FEB + 3 * DAY);
    const lifetime = keyBudgetLeft(
      { key_remaining_micros: 1, key_version: 8, budget_micros: 1, budget_period: null, period_start_ms: null, budget_day: day },
      FEB + 3 * DAY,
    );
    expect(lifetime.version).to.be.greaterThan(period.version);
  });

  it('moneySnapshot carries the same figure the hold store is given', () => {
    const s = moneySnapshot('w', 'k', { ...monthly, balance_micros: 10, balance_version: 1 }, FEB);
    expect(s).to.include({ keyRemainingMicros: 5_000_000, keyVersion: keyBudgetLeft(monthly, FEB).version, balanceMicros: 10 });
  });
});
