import { expect } from 'chai';
import { seedKey } from '../../support/data-plane.js';
import { DEPLOYMENT_ALIASES, resetFakes, startDeploymentPlane, type DeploymentPlane } from '../../support/deployment-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { call, seedOrg } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { describeEachStore } from '../../support/stores.js';
import type { ModelDeploymentsView } from '../../../control-plane/services/deployments/health.js';

describeEachStore('routing: deployment state on the console (reports from two proxies, no Redis)', (store) => {
  let dp: DeploymentPlane;
  let offsetMs = 0;
  let token = '';
  before(async () => {
    dp = await startDeploymentPlane(store, {
      proxies: 2,
      env: { PROXY_DEPLOYMENT_FAILURES: '2', PROXY_DEPLOYMENT_COOLDOWN_MS: '20000' },
      clock: { now: () => new Date(Date.now() + offsetMs) },
    });
    token = (await seedOrg(dp.cp.deps)).console_token;
  });
  beforeEach(() => resetFakes(dp.fakes));
  after(() => dp.close());

  const seed = () => seedKey(dp.cp.deps, { models: DEPLOYMENT_ALIASES });
  const view = async (): Promise<ModelDeploymentsView> => {
    for (const p of dp.proxies) await p.reportDeployments();
    return ok(`${dp.cp.url}/v1/models/deployments`, { token });
  };
  const deploymentsOf = (v: ModelDeploymentsView, alias: string) => v.models.find((m) => m.alias === alias)!.deployments;

  it('lists every alias with its deployments, healthy at both proxies, and who reported when', async () => {
    const v = await view();
    expect(v.reports.length).to.be.at.least(2);
    expect(deploymentsOf(v, 'tg/weighted')).to.deep.equal([
      { id: 'a/m-a', provider: 'a', upstream_model: 'm-a', weight: 3, state: 'healthy', back_at: null, failures: 0, proxies: v.reports.length },
      { id: 'b/m-b', provider: 'b', upstream_model: 'm-b', weight: 1, state: 'healthy', back_at: null, failures: 0, proxies: v.reports.length },
    ]);
    expect(v.models.find((m) => m.alias === 'tg/with-fallback')!.fallbacks).to.deep.equal(['tg/forbidden', 'tg/fallback']);
  });

  it('a retry-after at one proxy shows as cooling at 1 proxy, until the time the provider gave', async () => {
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '30' } });
    const a = await edgeCall(dp.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/health-1' }));
    expect(a.headers.get('x-tollgate-deployment')).to.equal('b/health-1-b');
    const [d, other] = deploymentsOf(await view(), 'tg/health-1');
    expect(d).to.include({ id: 'a/health-1-a', state: 'cooling', failures: 1, proxies: 1 });
    const back = Date.parse(d!.back_at!) - Date.now();
    expect(back).to.be.within(28_000, 30_500);
    expect(other).to.include({ state: 'healthy', failures: 0 });
  });

  it('failures in a row show the circuit open, then half-open once its cooldown is over', async () => {
    const k = await seed();
    const at = (i: number) => edgeCall(dp.proxies[i]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/health-2' }));
    dp.fakes.a.enqueue({ kind: 'error', status: 500 }, { kind: 'error', status: 502 });
    await at(0);
    expect(deploymentsOf(await view(), 'tg/health-2')[0]).to.include({ state: 'healthy', failures: 1 });
    await at(0);
    const [open] = deploymentsOf(await view(), 'tg/health-2');
    expect(open).to.include({ state: 'open', failures: 2, proxies: 1 });
    expect(Date.parse(open!.back_at!) - Date.now()).to.be.within(18_000, 20_500);
    // Past the cooldown (the control plane's clock moved; the proxy's report is aged): half-open, the next call probes.
    offsetMs = 21_000;
    try {
      const v = await ok(`${dp.cp.url}/v1/models/deployments`, { token });
      expect(deploymentsOf(v, 'tg/health-2')[0]).to.include({ state: 'half_open', back_at: null });
    } finally {
      offsetMs = 0;
    }
  });

  it('a proxy whose report is older than the freshness window is not counted; with none fresh, the state is unknown', async () => {
    await view();
    offsetMs = 3_600_000;
    try {
      const v: ModelDeploymentsView = await ok(`${dp.cp.url}/v1/models/deployments`, { token });
      expect(v.reports).to.deep.equal([]);
      expect(deploymentsOf(v, 'tg/health-1')[0]).to.include({ state: 'unknown', back_at: null, proxies: 0 });
    } finally {
      offsetMs = 0;
    }
  });

  it('members get 403; a report that breaks the contract is a 400, without the data-plane token a 401', async () => {
    const org = await seedOrg(dp.cp.deps);
    const member = await addMember(dp.cp.deps, org.org_id);
    expect((await call(`${dp.cp.url}/v1/models/deployments`, { token: member.token })).status).to.equal(403);
    const internal = (body: unknown, auth = `Bearer ${dp.cp.deps.config.dataPlaneToken}`) =>
      fetch(`${dp.cp.url}/internal/deployments/health`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await internal({ proxy_id: 'p 1', deployments: [{ id: 'a/m', state: 'melting', back_in_ms: -1, failures: 0 }] });
    expect(bad.status).to.equal(400);
    expect(bad.headers.get('content-type')).to.match(/problem\+json/);
    expect((await internal({ proxy_id: 'p1', deployments: [] }, 'Bearer nope')).status).to.equal(401);
    expect((await internal({ proxy_id: 'p1', deployments: [] })).status).to.equal(204);
  });
});
