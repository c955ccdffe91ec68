import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createMemoryHoldStore, type HoldStore, type LiveHold, type MoneySnapshot } from '../../../proxy/money/holds.js';
import { createLogger } from '../../../shared/logger.js';
import { createRedisHoldStore } from '../../../proxy/money/holds-redis.js';
import { redisForTests, TEST_REDIS_URL } from '../../support/data-plane.js';

let seq = 0;
function accounts() {
  seq++;
  const workspaceId = `w${seq}`;
  const keyId = `k${seq}`;
  const snap = (balance: number, version: number, key: number | null = null, keyVersion = 0): MoneySnapshot => ({
    workspaceId,
    balanceMicros: balance,
    balanceVersion: version,
    keyId,
    keyRemainingMicros: key,
    keyVersion,
  });
  return { ids: { workspaceId, keyId }, snap };
}

/** The same contract for the in-process store and the Redis store. */
function holdStoreContract(name: string, make: (ttlMs: number) => Promise<HoldStore | undefined>) {
  describe(`proxy: hold store contract [${name}]`, () => {
    let store: HoldStore;
    let shortLived: HoldStore;
    before(async function () {
      const s = await make(60_000);
      if (!s) return this.skip();
      store = s;
      shortLived = (await make(1_000))!;
    });

    it('admits holds up to the balance and refuses the one that would go over', async () => {
      const { snap } = accounts();
      expect(await store.hold('a1', snap(100, 1), 60)).to.deep.equal({ ok: true });
      expect(await store.hold('a2', snap(100, 1), 40)).to.deep.equal({ ok: true });
      expect(await store.hold('a3', snap(100, 1), 1)).to.deep.equal({ ok: false, reason: 'balance' });
    });

    it('a hold that does not fit but whose floor does takes half of what is left, never below the floor', async () => {
      const { snap } = accounts();
      expect(await store.hold('l1', snap(100, 1), 60, 10)).to.deep.equal({ ok: true });
      expect(await store.hold('l2', snap(100, 1), 80, 10)).to.deep.equal({ ok: true, lowered: 20 });
      expect(await store.hold('l3', snap(100, 1), 80, 15)).to.deep.equal({ ok: true, lowered: 15 });
      expect(await store.hold('l4', snap(100, 1), 80, 6)).to.deep.equal({ ok: false, reason: 'balance' });
    });

    it('checks the key budget too; a refused hold takes nothing', async () => {
      const { snap, ids } = accounts();
      expect(await store.hold('b1', snap(1000, 1, 50, 1), 50)).to.deep.equal({ ok: true });
      expect(await store.hold('b2', snap(1000, 1, 50, 1), 1)).to.deep.equal({ ok: false, reason: 'budget' });
      await store.release('b1', ids);
      expect(await store.hold('b3', snap(1000, 1, 50, 1), 50)).to.deep.equal({ ok: true });
      expect(await store.hold('b4', snap(1000, 1), 950)).to.deep.equal({ ok: true });
    });

    it('a release with the settled snapshot keeps spent money out of reach of stale snapshots; newer ones win', async () => {
      const { snap, ids } = accounts();
      await store.hold('c1', snap(100, 1), 80);
      await store.release('c1', ids, snap(30, 2));
      expect(await store.hold('c2', snap(100, 1), 31)).to.deep.equal({ ok: false, reason: 'balance' });
      expect(await store.hold('c3', snap(530, 3), 500)).to.deep.equal({ ok: true });
    });

    it('a hold expires after the TTL unless extended', async () => {
      const { snap, ids } = accounts();
      await shortLived.hold('d1', snap(100, 1), 60);
      await shortLived.hold('d2', snap(100, 1), 40);
      // Wide margins either side of each expiry: d2 at 1.0 s, d1 (extended at 0.6 s) at 1.6 s; checked at 1.3 s.
      await new Promise((r) => setTimeout(r, 600));
      await shortLived.extend('d1', ids);
      await new Promise((r) => setTimeout(r, 700));
      expect(await shortLived.hold('d3', snap(100, 1), 41)).to.deep.equal({ ok: false, reason: 'balance' });
      expect(await shortLived.hold('d4', snap(100, 1), 40)).to.deep.equal({ ok: true });
    });

    it("a finished call's hold becomes its cost: smaller frees the rest at once, larger is taken even past the balance", async () => {
      const { snap, ids } = accounts();
      await store.hold('r1', snap(1000, 1, 800, 1), 600);
      expect(await store.hold('r2', snap(1000, 1, 800, 1), 201)).to.deep.equal({ ok: false, reason: 'budget' });
      await store.resize('r1', ids, 150);
      // 800 − 150: the worst case of r1 no longer blocks r2, on the key as on the workspace.
      expect(await store.hold('r2', snap(1000, 1, 800, 1), 650)).to.deep.equal({ ok: true });
      expect(await store.hold('r3', snap(1000, 1, 800, 1), 1)).to.deep.equal({ ok: false, reason: 'budget' });
      // r2 cost more than it held: the account goes below zero and admits nothing, not even a free call.
      await store.resize('r2', ids, 900);
      expect(await store.hold('r4', snap(1000, 1), 0)).to.deep.equal({ ok: false, reason: 'balance' });
      await store.release('r1', ids, snap(850, 2, 650, 2));
      expect(await store.hold('r5', snap(850, 2, 650, 2), 0)).to.deep.equal({ ok: false, reason: 'balance' });
      // A resize after the release (a late one) does not bring the hold back.
      await store.resize('r1', ids, 500);
      await store.release('r2', ids, snap(-50, 3, -250, 3));
      expect(await store.hold('r6', snap(-50, 3), 0)).to.deep.equal({ ok: false, reason: 'balance' });
      expect(await store.hold('r7', snap(100, 4), 100)).to.deep.equal({ ok: true });
    });

    it('many concurrent holds never take more than the balance', async () => {
      const { snap } = accounts();
      const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => store.hold(`e${i}`, snap(1000, 1), 30)));
      expect(results.filter((r) => r.ok)).to.have.length(33);
    });
  });
}

holdStoreContract('memory', async (ttl) => createMemoryHoldStore(ttl));

const clients: Redis[] = [];
const silent = createLogger('silent', 'test-holds');

/**
 * A Redis store whose "control plane" answers with the newest snapshot the
 * test itself gave for the account, so the contract reads as for the memory store.
 */
function redisStore(redis: Redis, prefix: string, ttlMs: number, live: () => LiveHold[] = () => [], fenceMs = 100) {
  const newest = new Map<string, MoneySnapshot>();
  const store = createRedisHoldStore(redis, {
    prefix,
    ttlMs,
    fenceMs,
    live,
    authoritative: async (workspaceId) => newest.get(workspaceId)!,
    logger: silent,
  });
  return {
    ...store,
    hold(requestId: string, s: MoneySnapshot, amount: number, floor?: number) {
      const seen = newest.get(s.workspaceId);
      if (!seen || seen.balanceVersion <= s.balanceVersion) newest.set(s.workspaceId, s);
      return store.hold(requestId, s, amount, floor);
    },
    /** What the control plane says now (tests of a Redis that lost its data). */
    committed(s: MoneySnapshot) {
      newest.set(s.workspaceId, s);
    },
  };
}

holdStoreContract('redis', async (ttl) => {
  const prefix = await redisForTests('Redis hold store contract');
  if (!prefix) return undefined;
  const redis = new Redis(TEST_REDIS_URL);
  clients.push(redis);
  const store = redisStore(redis, prefix, ttl);
  await store.start();
  return store;
});

/** Deletes every key under the prefix: what a Redis restarted empty looks like to this prefix. */
async function forget(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (found.length) await redis.del(...found);
    cursor = next;
  } while (cursor !== '0');
}

describe('proxy: Redis hold store after Redis lost its data', () => {
  let redis: Redis;
  let prefix: string;
  before(async function () {
    const p = await redisForTests('Redis hold store data loss');
    if (!p) return this.skip();
    prefix = p;
    redis = new Redis(TEST_REDIS_URL);
    clients.push(redis);
  });

  it("another proxy's holds in flight are put back before anything is admitted, and the account is founded on the control plane's figures", async () => {
    const { snap, ids } = accounts();
    const bLive: LiveHold[] = [];
    const a = redisStore(redis, prefix, 60_000, () => [], 400);
    const b = redisStore(redis, prefix, 60_000, () => bLive, 400);
    await a.start();
    await b.start();
    // B has a call in flight holding 450 of a 1000 budget; A's cached snapshot is stale (1000 at version 1).
    expect(await b.hold('f1', snap(10_000, 1, 1000, 1), 450)).to.deep.equal({ ok: true });
    bLive.push({ requestId: 'f1', ...ids, amountMicros: 450, keyBudget: true });
    // Meanwhile 300 were spent and settled (its hold released with the control plane's answer).
    await b.hold('f2', snap(10_000, 1, 1000, 1), 300);
    await b.release('f2', ids, snap(9_700, 2, 700, 2));
    a.committed(snap(9_700, 2, 700, 2));
    await forget(redis, prefix);
    // A admits nothing from its stale snapshot: it waits out the fence, by which time B has put f1 back.
    expect(await a.hold('f3', snap(10_000, 1, 1000, 1), 251)).to.deep.equal({ ok: false, reason: 'budget' });
    expect(await a.hold('f4', snap(10_000, 1, 1000, 1), 250)).to.deep.equal({ ok: true });
    await a.close();
    await b.close();
  });
});

after(() => {
  for (const c of clients) c.disconnect();
});
