import { expect } from 'chai';
import { createMemoryHoldStore, type MoneySnapshot } from '../../../../proxy/money/holds.js';

const WS: MoneySnapshot = { workspaceId: 'w', balanceMicros: 1_000, balanceVersion: 1, keyId: 'k', keyRemainingMicros: 300, keyVersion: 1 };
const IDS = { workspaceId: 'w', keyId: 'k' };

/** The in-process store on a clock the test moves (its `now` is injected). */
function store(ttlMs = 1_000) {
  let t = 0;
  const holds = createMemoryHoldStore(ttlMs, () => t);
  return { holds, at: (ms: number) => (t = ms) };
}

describe('money: in-process holds (one proxy, no Redis)', () => {
  it('answers at once, without a promise, for hold and release', () => {
    const { holds } = store();
    const held = holds.hold('a', WS, 100);
    expect(held).to.deep.equal({ ok: true });
    expect(holds.release('a', IDS)).to.equal(undefined);
  });

  it('refuses on the budget when the key has one and its remainder is short, though the balance is not', () => {
    const { holds } = store();
    expect(holds.hold('a', WS, 300)).to.deep.equal({ ok: true });
    expect(holds.hold('b', WS, 1)).to.deep.equal({ ok: false, reason: 'budget' });
    expect(holds.hold('c', { ...WS, keyRemainingMicros: null }, 700)).to.deep.equal({ ok: true });
    expect(holds.hold('d', { ...WS, keyRemainingMicros: null }, 1)).to.deep.equal({ ok: false, reason: 'balance' });
  });

  it('ignores an older snapshot than the one it has (a stale key cache cannot give money back)', () => {
    const { holds } = store();
    expect(holds.release('x', IDS, { ...WS, balanceMicros: 100, balanceVersion: 5 })).to.equal(undefined);
    expect(holds.hold('a', { ...WS, keyRemainingMicros: null, balanceMicros: 1_000_000, balanceVersion: 4 }, 101)).to.deep.equal({
      ok: false,
      reason: 'balance',
    });
  });

  it('a hold expires at its TTL on the injected clock; extend pushes it out by the TTL again', async () => {
    const { holds, at } = store(1_000);
    const snap = { ...WS, keyRemainingMicros: null };
    expect(holds.hold('a', snap, 600)).to.deep.equal({ ok: true });
    expect(holds.hold('b', snap, 400)).to.deep.equal({ ok: true });
    at(500);
    await holds.extend('b', IDS);
    at(999);
    expect(holds.hold('c', snap, 1)).to.deep.equal({ ok: false, reason: 'balance' });
    at(1_000);
    // 'a' lapsed (600 back); 'b' lives to 1,500.
    expect(holds.hold('c', snap, 600)).to.deep.equal({ ok: true });
    expect(holds.release('c', IDS)).to.equal(undefined);
    at(1_500);
    expect(holds.hold('d', snap, 1_000)).to.deep.equal({ ok: true });
  });

  it('reassert puts owed holds back without checking the money, once each', async () => {
    const { holds } = store();
    const live = { requestId: 'r', workspaceId: 'w', keyId: 'k', amountMicros: 5_000, keyBudget: true };
    await holds.reassert([live, live]);
    await holds.reassert([live]);
    const snap = { ...WS, balanceMicros: 5_999, keyRemainingMicros: null };
    // Counted once: 999 of 5,999 is left.
    expect(holds.hold('a', snap, 999)).to.deep.equal({ ok: true });
    expect(holds.hold('b', snap, 1)).to.deep.equal({ ok: false, reason: 'balance' });
    expect(holds.release('r', IDS)).to.equal(undefined);
    expect(holds.hold('c', snap, 5_000)).to.deep.equal({ ok: true });
  });
});
