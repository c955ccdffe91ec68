import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { moneyOf, seedKey, startTestProxy } from '../../support/data-plane.js';
import { edgePath, modelBody } from '../../support/edge-calls.js';

describeEachStore('proxy: graceful shutdown', (store) => {
  let cp: TestControlPlane;
  let fake: FakeUpstream;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    fake = await startFakeUpstream();
  });
  after(async () => {
    await fake.close();
    await cp.close();
  });

  it('a stream in flight when the proxy is told to stop runs to its end and is billed; new connections are refused', async () => {
    const proxy = await startTestProxy(cp, fake);
    const k = await seedKey(cp.deps);
    fake.enqueue({ kind: 'ok', outputTokens: 8, eventDelayMs: 50 });
    const res = await fetch(`${proxy.url}${edgePath('chat', k.slug)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(modelBody('chat', { stream: true })),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const closing = proxy.close();
    let text = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
    expect(text).to.include('data: [DONE]');
    await closing;
    expect(
      await fetch(`${proxy.url}/healthz`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).to.equal('refused');
    const m = await moneyOf(cp.deps, k);
    expect(m.entries).to.equal(1);
    expect(m.spend).to.be.greaterThan(0);
  });
});
