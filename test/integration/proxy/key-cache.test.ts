import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { creditWorkspace, revokeKey, seedAnotherKey, seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, ERROR_TYPES, errorType, FORMATS, modelBody } from '../../support/edge-calls.js';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { change_feed_publish } from '../../../control-plane/stores/change-feed.js';
import { team_models_replace } from '../../../control-plane/stores/teams.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls until `status` comes back or `withinMs` passes; returns how long it took, or -1. */
async function until(withinMs: number, attempt: () => Promise<number>, status: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start <= withinMs) {
    if ((await attempt()) === status) return Date.now() - start;
    await sleep(50);
  }
  return -1;
}

describeEachStore('proxy: key cache invalidation (push, with a poll behind it)', (store) => {
  let dp: DataPlane;
  let pushOnly: RunningProxy;
  let pollOnly: RunningProxy;
  before(async () => {
    dp = await startDataPlane(store, {
      // Keys stay fresh for an hour: only invalidation can make these proxies notice a change.
      env: { PROXY_KEY_FRESH_MS: '3600000' },
      proxies: [{ env: { PROXY_VERSION_POLL_MS: '3600000' } }, { env: { PROXY_VERSION_POLL_MS: '500' }, changePush: false }],
    });
    [pushOnly, pollOnly] = dp.proxies as [RunningProxy, RunningProxy];
  });
  after(() => dp.close());

  for (const format of FORMATS) {
    it(`${format}: a revoked key is refused within 2 s at every proxy`, async () => {
      const k = await seedKey(dp.cp.deps);
      for (const p of [pushOnly, pollOnly]) expect((await edgeCall(p.url, format, k.slug, k.secret, modelBody(format))).status).to.equal(200);
      await revokeKey(dp.cp.deps, k.keyId);
      for (const p of [pushOnly, pollOnly]) {
        const took = await until(2000, async () => (await edgeCall(p.url, format, k.slug, k.secret, modelBody(format))).status, 401);
        expect(took, 'refused within 2 s').to.be.at.least(0);
      }
    });
  }

  it("a team's model access change reaches the proxy: 403 once the model is removed", async () => {
    const k = await seedKey(dp.cp.deps);
    expect((await edgeCall(pushOnly.url, 'chat', k.slug, k.secret, modelBody('chat'))).status).to.equal(200);
    await dp.cp.deps.db.transaction(async (tx) => {
      await team_models_replace(tx, k.teamId, ['tg/haiku']);
      await change_feed_publish(tx, 'team', k.teamId);
    });
    expect(await until(2000, async () => (await edgeCall(pushOnly.url, 'chat', k.slug, k.secret, modelBody('chat'))).status, 403)).to.be.at.least(0);
  });

  it('a credit to an empty workspace lets its keys call again', async () => {
    const k = await seedKey(dp.cp.deps, { balanceUsd: 0 });
    expect((await edgeCall(pushOnly.url, 'messages', k.slug, k.secret, modelBody('messages'))).status).to.equal(402);
    await creditWorkspace(dp.cp.deps, k.workspaceId, 5);
    expect(
      await until(2000, async () => (await edgeCall(pushOnly.url, 'messages', k.slug, k.secret, modelBody('messages'))).status, 200),
    ).to.be.at.least(0);
  });
});

describeEachStore('proxy: control plane unreachable', (store) => {
  let dp: DataPlane;
  before(async () => {
    // Ask the control plane on every call, so its absence is felt at once; known-good keys last 4 s without it
    // (wide, so a slow machine still gets its first calls in before the window ends).
    dp = await startDataPlane(store, { env: { PROXY_KEY_FRESH_MS: '1', PROXY_KEY_STALE_MS: '4000' } });
  });
  // The test itself stops the control plane; closing it again is harmless.
  after(() => dp.close());

  it('a key known good keeps working for the stale window; an unknown key gets 503 in each format', async function () {
    this.timeout(30_000);
    const known = await seedKey(dp.cp.deps);
    const neverSeen = await seedAnotherKey(dp.cp.deps, known);
    for (const format of FORMATS) expect((await edgeCall(dp.proxy.url, format, known.slug, known.secret, modelBody(format))).status).to.equal(200);
    await dp.proxy.drain();
    await dp.cp.close();

    for (const format of FORMATS) {
      expect((await edgeCall(dp.proxy.url, format, known.slug, known.secret, modelBody(format))).status).to.equal(200);
      const refused = await edgeCall(dp.proxy.url, format, neverSeen.slug, neverSeen.secret, modelBody(format));
      expect(refused.status).to.equal(503);
      expect(errorType(format, refused)).to.equal(ERROR_TYPES[503][format]);
    }
    await sleep(4100);
    expect((await edgeCall(dp.proxy.url, 'chat', known.slug, known.secret, modelBody('chat'))).status).to.equal(503);
  });
});
