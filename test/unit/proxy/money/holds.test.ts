import { expect } from 'chai';
import { createMemoryHoldStore, type MoneySnapshot } from '../../../../proxy/money/holds.js';

const snap = (balance: number, version: number, key: number | null = null, keyVersion = 0): MoneySnapshot => ({
  workspaceId: 'w',
  balanceMicros: balance,
  balanceVersion: version,
  keyId: 'k',
  keyRemainingMicros: key,
  keyVersion,
});
const ids = { workspaceId: 'w', keyId: 'k' };

describe('proxy: in-process holds', () => {
  it('admits holds up to the balance and refuses the one that would go over', async () => {
    const store = createMemoryHoldStore(60_000);
    expect(await store.hold('r1', snap(100, 1), 60)).to.deep.equal({ ok: true });
    expect(await store.hold('r2', snap(100, 1), 40)).to.deep.equal({ ok: true });
    expect(await store.hold('r3', snap(100, 1), 1)).to.deep.equal({ ok: false, reason: 'balance' });
  });

  it('checks the key budget as well as the balance, and holds on both or neither', async () => {
    const store = createMemoryHoldStore(60_000);
    expect(await store.hold('r1', snap(1000, 1, 50, 1), 50)).to.deep.equal({ ok: true });
    expect(await store.hold('r2', snap(1000, 1, 50, 1), 1)).to.deep.equal({ ok: false, reason: 'budget' });
    await store.release('r1', ids);
    expect(await store.hold('r3', snap(1000, 1, 50, 1), 50)).to.deep.equal({ ok: true });
  });

  it('a release with the settled snapshot keeps the spent money out of reach, whatever stale snapshot callers bring', async () => {
    const store = createMemoryHoldStore(60_000);
    await store.hold('r1', snap(100, 1), 80);
    // The call cost 70: the control plane now says 30 left, at version 2.
    await store.release('r1', ids, snap(30, 2));
    expect(await store.hold('r2', snap(100, 1), 31)).to.deep.equal({ ok: false, reason: 'balance' });
    expect(await store.hold('r3', snap(100, 1), 30)).to.deep.equal({ ok: true });
  });

  it('adopts a newer snapshot (a credit) from a caller', async () => {
    const store = createMemoryHoldStore(60_000);
    await store.hold('r1', snap(10, 1), 10);
    expect(await store.hold('r2', snap(510, 3), 500)).to.deep.equal({ ok: true });
  });

  it('lets a hold expire so a dead request cannot lock money forever', async () => {
    let now = 0;
    const store = createMemoryHoldStore(1_000, () => now);
    await store.hold('r1', snap(100, 1), 100);
    expect((await store.hold('r2', snap(100, 1), 1)).ok).to.equal(false);
    now = 1_001;
    expect((await store.hold('r3', snap(100, 1), 100)).ok).to.equal(true);
  });
});

describe('proxy: in-process holds, kept alive', () => {
  it('an extended hold outlives its first expiry; an unextended one does not', async () => {
    let now = 0;
    const store = createMemoryHoldStore(1_000, () => now);
    await store.hold('long', snap(100, 1), 60);
    await store.hold('short', { ...snap(100, 1), keyId: 'k2' }, 40);
    now = 900;
    await store.extend('long', ids);
    now = 1_500;
    expect(await store.hold('r3', snap(100, 1), 41)).to.deep.equal({ ok: false, reason: 'balance' });
    expect(await store.hold('r4', snap(100, 1), 40)).to.deep.equal({ ok: true });
  });
});
