import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createMemoryHoldStore, type HoldStore, type MoneySnapshot } from '../../../proxy/holds.js';
import { createRedisHoldStore } from '../../../proxy/holds-redis.js';
import { redisForTests, TEST_REDIS_URL } from '../../support/data-plane.js';

let seq = 0;
function accounts() {
  seq++;
  const workspaceId = `w${seq}`;
  const keyId = `k${seq}`;
  const snap = (balance: number, version: number, key: number | null = null, keyVersion = 0): MoneySnapshot => ({
    workspaceId, balanceMicros: balance, balanceVersion: version, keyId, keyRemainingMicros: key, keyVersion,
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

    it('many concurrent holds never take more than the balance', async () => {
      const { snap } = accounts();
      const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => store.hold(`e${i}`, snap(1000, 1), 30)));
      expect(results.filter((r) => r.ok)).to.have.length(33);
    });
  });
}

holdStoreContract('memory', async (ttl) => createMemoryHoldStore(ttl));

const clients: Redis[] = [];
holdStoreContract('redis', async (ttl) => {
  const prefix = await redisForTests('Redis hold store contract');
  if (!prefix) return undefined;
  const redis = new Redis(TEST_REDIS_URL);
  clients.push(redis);
  return createRedisHoldStore(redis, prefix, ttl);
});
after(() => {
  for (const c of clients) c.disconnect();
});
