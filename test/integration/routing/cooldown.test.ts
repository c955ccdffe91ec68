import { expect } from 'chai';
import { seedKey, redisForTests, TEST_REDIS_URL } from '../../support/data-plane.js';
import { DEPLOYMENT_ALIASES, resetFakes, servedBy, startDeploymentPlane, type DeploymentPlane } from '../../support/deployment-plane.js';
import { edgeCall, ERROR_TYPES, errorType, FORMATS, modelBody } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';
import type { ModelDeploymentsView } from '../../../control-plane/services/deployments/health.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeEachStore('routing: cooldown and circuit', (store) => {
  let dp: DeploymentPlane;
  before(async () => {
    dp = await startDeploymentPlane(store, {
      env: { PROXY_DEPLOYMENT_FAILURES: '2', PROXY_DEPLOYMENT_COOLDOWN_MS: '400', PROXY_UPSTREAM_TTFB_MS: '300' },
    });
  });
  beforeEach(() => resetFakes(dp.fakes));
  after(() => dp.close());

  const seed = () => seedKey(dp.cp.deps, { models: DEPLOYMENT_ALIASES });
  const call = (k: { slug: string; secret: string }, alias: string, format: WireFormat = 'chat') =>
    edgeCall(dp.proxies[0]!.url, format, k.slug, k.secret, modelBody(format, { model: alias }));

  it('a 429 with retry-after keeps the deployment out for that long, then it is back', async () => {
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '1' } });
    expect((await call(k, 'tg/cool-1')).headers.get('x-tollgate-deployment')).to.equal('b/cool-1-b');
    for (let i = 0; i < 3; i++) expect((await call(k, 'tg/cool-1')).status).to.equal(200);
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 1, b: 4, c: 0 });
    await sleep(1_100);
    expect((await call(k, 'tg/cool-1')).headers.get('x-tollgate-deployment')).to.equal('a/cool-1-a');
  });

  it('failures in a row open the circuit; after the cooldown one probe goes through and closes it', async () => {
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 500 }, { kind: 'error', status: 502 });
    for (let i = 0; i < 2; i++) expect((await call(k, 'tg/cool-2')).headers.get('x-tollgate-deployment')).to.equal('b/cool-2-b');
    // Open: skipped without a try.
    for (let i = 0; i < 3; i++) expect((await call(k, 'tg/cool-2')).headers.get('x-tollgate-deployment')).to.equal('b/cool-2-b');
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 2, b: 5, c: 0 });
    await sleep(450);
    // Half-open: the probe succeeds, and the deployment is back for every call.
    for (let i = 0; i < 3; i++) expect((await call(k, 'tg/cool-2')).headers.get('x-tollgate-deployment')).to.equal('a/cool-2-a');
  });

  it('a failed probe opens the circuit again', async () => {
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 503 }, { kind: 'error', status: 503 }, { kind: 'error', status: 503 });
    await call(k, 'tg/cool-3');
    await call(k, 'tg/cool-3');
    await sleep(450);
    expect((await call(k, 'tg/cool-3')).headers.get('x-tollgate-deployment')).to.equal('b/cool-3-b');
    expect(dp.fakes.a.requests.length).to.equal(3);
    expect((await call(k, 'tg/cool-3')).headers.get('x-tollgate-deployment')).to.equal('b/cool-3-b');
    expect(dp.fakes.a.requests.length).to.equal(3);
  });

  it('a deployment that stalls costs its time-to-first-byte limit only until its circuit opens; then calls pass it by at once', async () => {
    const k = await seed();
    const streamed = async () => {
      const t0 = performance.now();
      const a = await edgeCall(dp.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/cool-5', stream: true }));
      expect(a.headers.get('x-tollgate-deployment')).to.equal('b/cool-5-b');
      return performance.now() - t0;
    };
    dp.fakes.a.enqueue({ kind: 'stall', when: 'before-headers' }, { kind: 'stall', when: 'before-headers' });
    for (let i = 0; i < 2; i++) expect(await streamed()).to.be.at.least(290);
    // Open: no third wait on a.
    for (let i = 0; i < 3; i++) expect(await streamed()).to.be.below(290);
    expect(dp.fakes.a.requests.length).to.equal(2);
  });

  // The first format's case makes both deployments cool; each later format finds them still cooling.
  for (const [i, format] of FORMATS.entries()) {
    it(`${format}: every deployment cooling and no fallback → 503 in the client's format with retry-after the soonest return`, async () => {
      const k = await seed();
      dp.fakes.a.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '30' } });
      dp.fakes.b.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '20' } });
      const first = await call(k, 'tg/cool-4', format);
      if (i === 0) {
        // The last deployment's own 429 reaches the client: there was nobody left to try.
        expect(first.status).to.equal(429);
        const again = await call(k, 'tg/cool-4', format);
        expect(again.status).to.equal(503);
        expect(errorType(format, again)).to.equal(ERROR_TYPES[503][format]);
        expect(Number(again.headers.get('retry-after'))).to.be.within(18, 20);
        expect(servedBy(dp.fakes)).to.deep.equal({ a: 1, b: 1, c: 0 });
      } else {
        // Still cooling from the first case: no provider is asked.
        expect(first.status).to.equal(503);
        expect(errorType(format, first)).to.equal(ERROR_TYPES[503][format]);
        expect(Number(first.headers.get('retry-after'))).to.be.within(18, 20);
        expect(servedBy(dp.fakes)).to.deep.equal({ a: 0, b: 0, c: 0 });
      }
    });
  }
});

describeEachStore('routing: cooldown shared through Redis', (store) => {
  let dp: DeploymentPlane | undefined;
  before(async function () {
    const prefix = await redisForTests('deployment cooldown in Redis');
    if (!prefix) this.skip();
    dp = await startDeploymentPlane(store, { proxies: 2, env: { REDIS_URL: TEST_REDIS_URL, PROXY_REDIS_PREFIX: prefix } });
  });
  after(() => dp?.close());

  it('a retry-after seen by one proxy keeps the deployment out for the other', async () => {
    const plane = dp!;
    const k = await seedKey(plane.cp.deps, { models: DEPLOYMENT_ALIASES });
    plane.fakes.a.enqueue({ kind: 'error', status: 503, headers: { 'retry-after': '5' } });
    const first = await edgeCall(plane.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/cool-1' }));
    expect(first.headers.get('x-tollgate-deployment')).to.equal('b/cool-1-b');
    // The failure is recorded without holding the answer up: give it its round trip.
    await sleep(50);
    for (let i = 0; i < 3; i++) {
      const a = await edgeCall(plane.proxies[1]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/cool-1' }));
      expect(a.headers.get('x-tollgate-deployment')).to.equal('b/cool-1-b');
    }
    expect(servedBy(plane.fakes)).to.deep.equal({ a: 1, b: 4, c: 0 });
  });

  it('the console shows a cooldown kept in Redis as seen by both proxies', async () => {
    const plane = dp!;
    const k = await seedKey(plane.cp.deps, { models: DEPLOYMENT_ALIASES });
    plane.fakes.a.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '30' } });
    await edgeCall(plane.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/health-1' }));
    await sleep(50);
    for (const p of plane.proxies) await p.reportDeployments();
    const v: ModelDeploymentsView = await ok(`${plane.cp.url}/v1/models/deployments`, { token: (await seedOrg(plane.cp.deps)).console_token });
    const [a, b] = v.models.find((m) => m.alias === 'tg/health-1')!.deployments;
    expect(a).to.include({ state: 'cooling', failures: 1, proxies: 2 });
    expect(Date.parse(a!.back_at!) - Date.now()).to.be.within(28_000, 30_500);
    expect(b).to.include({ state: 'healthy', failures: 0 });
  });

  it("a session pinned at one proxy keeps its deployment at the other, though that proxy's own pick differs", async () => {
    const plane = dp!;
    resetFakes(plane.fakes);
    const k = await seedKey(plane.cp.deps, { models: DEPLOYMENT_ALIASES });
    const at = (i: number, session: string) =>
      edgeCall(plane.proxies[i]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/affinity-1' }), {
        headers: { 'x-claude-code-session-id': session },
      });
    const run = `${Date.now()}`;
    // Even weights: each proxy's wheel goes a, b, a, b… so proxy 0's second session lands on b.
    expect((await at(0, `s1-${run}`)).headers.get('x-tollgate-deployment')).to.equal('a/affinity-1-a');
    expect((await at(0, `s2-${run}`)).headers.get('x-tollgate-deployment')).to.equal('b/affinity-1-b');
    await sleep(50);
    // Proxy 1 has never seen either session, and its own first pick is a.
    for (let i = 0; i < 3; i++) expect((await at(1, `s2-${run}`)).headers.get('x-tollgate-deployment')).to.equal('b/affinity-1-b');
    expect((await at(1, `s1-${run}`)).headers.get('x-tollgate-deployment')).to.equal('a/affinity-1-a');
    expect(servedBy(plane.fakes)).to.deep.equal({ a: 2, b: 4, c: 0 });
  });
});
