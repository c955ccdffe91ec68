import { expect } from 'chai';
import { change_feed_publish } from '../../../control-plane/stores/change-feed.js';
import type { WireFormat } from '../../../proxy/call.js';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { sha256Hex } from '../../../shared/secrets.js';
import { startControlPlaneRelay, type ControlPlaneRelay } from '../../support/control-plane-relay.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { revokeKey, seedKey, startTestProxy, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { describeEachStore } from '../../support/stores.js';

/*
 * Fail-static must survive the change feed's own timing. Under load, the
 * change stream's `ready`, the first successful poll, or a change event can
 * land after a key was looked up and cached and after the feed moved on;
 * each of these once emptied the key cache (or kept the answer out of it),
 * so the control plane dying a moment later turned a key served a second
 * ago into a 503. Here a relay between the proxy and the control plane
 * forces each ordering, then plays a SIGKILL (every connection cut) and
 * waits past the key's freshness: the warm key must still be served, and a
 * key revoked before the outage must still be refused.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STREAM = '/internal/changes/stream';
const VERSION = '/internal/changes/version';
/** Fresh for 1 s, usable without the control plane for 10 s after: the outage below is checked at 1.5 s. */
const WINDOWS = { PROXY_KEY_FRESH_MS: '1000', PROXY_KEY_STALE_MS: '10000' };
const CALLS: { format: WireFormat; stream: boolean }[] = [
  { format: 'chat', stream: false },
  { format: 'chat', stream: true },
  { format: 'messages', stream: false },
  { format: 'messages', stream: true },
];

describeEachStore('proxy: a late change-feed position keeps known keys usable through an outage', (store) => {
  let fake: FakeUpstream;
  let cp: TestControlPlane;
  let relay: ControlPlaneRelay | undefined;
  let proxy: RunningProxy | undefined;
  before(async () => {
    fake = await startFakeUpstream();
    cp = await startTestControlPlane(store.db);
  });
  afterEach(async () => {
    await proxy?.close(0);
    await relay?.close();
    proxy = relay = undefined;
  });
  after(async () => {
    await fake.close();
    await cp.close();
  });

  async function startWith(r: ControlPlaneRelay, env: NodeJS.ProcessEnv, changePush: boolean) {
    proxy = await startTestProxy({ ...cp, url: r.url }, fake, { ...WINDOWS, ...env }, { changePush });
    return { url: proxy.url };
  }
  const status = async (url: string, k: SeededKey, c = CALLS[0]!) =>
    (await edgeCall(url, c.format, k.slug, k.secret, modelBody(c.format, c.stream ? { stream: true } : {}))).status;

  /** The feed moves: a change nobody's key depends on, and the revocation of `revoked`. */
  async function moveFeed(revoked: SeededKey): Promise<void> {
    const elsewhere = await seedKey(cp.deps);
    await cp.deps.db.transaction((tx) => change_feed_publish(tx, 'key', elsewhere.keyId));
    await revokeKey(cp.deps, revoked.keyId);
  }

  /** The control plane gone, the keys' freshness over: the warm key served on every format, the revoked one refused. */
  async function outage(url: string, r: ControlPlaneRelay, warm: SeededKey, revoked: SeededKey): Promise<void> {
    r.down();
    await sleep(1500);
    const served = await Promise.all(CALLS.map((c) => status(url, warm, c)));
    expect(served, 'the warm key during the outage (chat, chat streamed, messages, messages streamed)').to.deep.equal([200, 200, 200, 200]);
    expect(await status(url, revoked), 'the key revoked before the outage').to.be.oneOf([401, 503]);
  }

  it("the change stream's ready arriving after a key was cached and the feed moved", async () => {
    const warm = await seedKey(cp.deps);
    const revoked = await seedKey(cp.deps);
    const r = await startControlPlaneRelay(cp.url);
    relay = r;
    r.hold(STREAM);
    // No poll after the first: the stream's ready is the only way the proxy hears the feed moved.
    const { url } = await startWith(r, { PROXY_VERSION_POLL_MS: '3600000' }, true);
    expect([await status(url, warm), await status(url, revoked)]).to.deep.equal([200, 200]);
    await moveFeed(revoked);
    const ready = r.passed('event: ready');
    r.release(STREAM);
    await ready;
    await r.quiet(200, 1);
    await outage(url, r, warm, revoked);
  });

  it('the first successful poll arriving after a key was cached and the feed moved', async () => {
    const warm = await seedKey(cp.deps);
    const revoked = await seedKey(cp.deps);
    const r = await startControlPlaneRelay(cp.url);
    relay = r;
    // The first poll fails (a slow control plane at the proxy's start), so the proxy starts without a position.
    r.fail(VERSION);
    const { url } = await startWith(r, { PROXY_VERSION_POLL_MS: '200' }, false);
    expect([await status(url, warm), await status(url, revoked)]).to.deep.equal([200, 200]);
    await moveFeed(revoked);
    const position = r.passed('"version"');
    r.unfail(VERSION);
    await position;
    // Two poll periods with nothing new: the position is set and whatever it led to is done.
    await sleep(500);
    await outage(url, r, warm, revoked);
  });

  it('a change to another key applied while the warm-up lookup was in flight', async () => {
    const warm = await seedKey(cp.deps);
    const revoked = await seedKey(cp.deps);
    const r = await startControlPlaneRelay(cp.url);
    relay = r;
    const ready = r.passed('event: ready');
    const { url } = await startWith(r, { PROXY_VERSION_POLL_MS: '3600000' }, true);
    await ready;
    expect(await status(url, revoked)).to.equal(200);
    const lookup = `/internal/keys/${sha256Hex(warm.secret)}`;
    r.hold(lookup);
    const call = status(url, warm);
    while (!r.waitingOn(lookup)) await sleep(5);
    const pushed = r.passed('event: change');
    await moveFeed(revoked);
    await pushed;
    await r.quiet(100, 1);
    r.release(lookup);
    expect(await call).to.equal(200);
    await r.quiet(100, 1);
    await outage(url, r, warm, revoked);
  });
});
