import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';

async function readyz(url: string): Promise<{ status: number; checks: Record<string, boolean> }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, checks: ((await res.json()) as { checks: Record<string, boolean> }).checks };
}

/** Polls /readyz until `until` holds (the proxy learns of an outage at its next control-plane call, within a second). */
async function readyzOnce(url: string, until: (r: { status: number; checks: Record<string, boolean> }) => boolean) {
  let r = await readyz(url);
  for (let i = 0; i < 50 && !until(r); i++) {
    await new Promise((res) => setTimeout(res, 100));
    r = await readyz(url);
  }
  return r;
}

describeEachStore('lifecycle: /readyz says whether each half can serve, /healthz only that it runs', (store) => {
  let dp: DataPlane;
  before(async () => {
    // Two proxies: one will have served a key (warm cache), the other nothing.
    dp = await startDataPlane(store, { proxies: [{}, {}] });
  });
  after(() => dp.close());

  it('both halves are ready with the store, the models file and the control plane up', async () => {
    const cp = await readyz(dp.cp.url);
    expect(cp).to.deep.equal({ status: 200, checks: { accepting: true, models: true, store: true } });
    const proxy = await readyzOnce(dp.proxy.url, (r) => r.checks.controlPlane === true);
    expect(proxy.status).to.equal(200);
    expect(proxy.checks).to.include({ accepting: true, models: true, controlPlane: true });
  });

  it('with the control plane gone, a proxy with a warm key cache stays ready and a cold one is not; both stay alive', async () => {
    const k = await seedKey(dp.cp.deps);
    expect((await edgeCall(dp.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat'))).status).to.equal(200);
    await dp.proxies[0]!.drain();
    await dp.cp.close();

    const warm = await readyzOnce(dp.proxies[0]!.url, (r) => r.checks.controlPlane === false);
    expect(warm).to.deep.equal({ status: 200, checks: { accepting: true, models: true, controlPlane: false, keyCacheWarm: true } });
    const cold = await readyzOnce(dp.proxies[1]!.url, (r) => r.status === 503);
    expect(cold).to.deep.equal({ status: 503, checks: { accepting: true, models: true, controlPlane: false, keyCacheWarm: false } });
    for (const p of dp.proxies) expect((await fetch(`${p.url}/healthz`)).status).to.equal(200);
  });
});
