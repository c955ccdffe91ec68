import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, redisForTests, seedKey, startDataPlane, TEST_REDIS_URL, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, FORMATS, modelBody } from '../../support/edge-calls.js';
import type { RunningProxy } from '../../../proxy/runtime.js';

/** Each call may produce 1,000 tokens of output, and does: worst case and real cost are close. */
const MAX_TOKENS = 1000;

async function burst(proxies: RunningProxy[], slug: string, secret: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const format = FORMATS[i % FORMATS.length]!;
      const p = proxies[i % proxies.length]!;
      return (await edgeCall(p.url, format, slug, secret, modelBody(format, { max_tokens: MAX_TOKENS }))).status;
    }),
  );
}

function concurrencySuite(label: string, setup: () => Promise<DataPlane | undefined>) {
  let world: DataPlane | undefined;
  before(async function () {
    world = await setup();
    if (!world) this.skip();
  });
  beforeEach(() => {
    world!.fake.reset();
    for (let i = 0; i < 200; i++) world!.fake.enqueue({ kind: 'ok', outputTokens: MAX_TOKENS });
  });
  after(() => world?.close());
  const drain = () => Promise.all(world!.proxies.map((p) => p.drain()));

  it(`${label}: a key with budget B never settles more than B under concurrent calls`, async () => {
    const budget = 0.05; // room for three calls of ~$0.015
    const k = await seedKey(world!.cp.deps, { budgetUsd: budget });
    for (let wave = 0; wave < 3; wave++) {
      const statuses = await burst(world!.proxies, k.slug, k.secret, 12);
      expect(
        statuses.every((s) => s === 200 || s === 402),
        statuses.join(),
      ).to.equal(true);
      await drain();
    }
    const m = await moneyOf(world!.cp.deps, k);
    // Three whole calls, then calls with lowered output ceilings while a minimum call fits.
    expect(m.entries).to.be.at.least(3);
    expect(m.spend).to.be.at.most(budget);
  });

  it(`${label}: a workspace balance never goes below zero under concurrent calls`, async () => {
    const k = await seedKey(world!.cp.deps, { balanceUsd: 0.05 });
    for (let wave = 0; wave < 3; wave++) {
      await burst(world!.proxies, k.slug, k.secret, 12);
      await drain();
    }
    const m = await moneyOf(world!.cp.deps, k);
    expect(m.entries).to.be.at.least(3);
    expect(m.balance).to.be.at.least(0);
  });

  it(`${label}: N+1 concurrent calls against an rpm of N admit exactly N`, async () => {
    const rpm = 7;
    const k = await seedKey(world!.cp.deps, { rpm });
    const statuses = await burst(world!.proxies, k.slug, k.secret, rpm + 1);
    expect(statuses.filter((s) => s === 200)).to.have.length(rpm);
    expect(statuses.filter((s) => s === 429)).to.have.length(1);
  });
}

describeEachStore('proxy: money and limits under concurrency, one proxy, in-process holds', (store) => {
  concurrencySuite('one proxy', () => startDataPlane(store));
});

describeEachStore('proxy: money and limits under concurrency, two proxies sharing Redis', (store) => {
  concurrencySuite('two proxies on Redis', async () => {
    const prefix = await redisForTests('two proxies sharing Redis: holds and rate limits');
    if (!prefix) return undefined;
    return startDataPlane(store, { env: { REDIS_URL: TEST_REDIS_URL, PROXY_REDIS_PREFIX: prefix }, proxies: [{}, {}] });
  });
});
