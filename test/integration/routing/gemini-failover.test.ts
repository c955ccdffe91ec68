import { expect } from 'chai';
import { pino } from 'pino';
import { moneyOf, seedKey } from '../../support/data-plane.js';
import { startDeploymentPlane, type DeploymentPlane } from '../../support/deployment-plane.js';
import type { Behavior } from '../../support/fake-upstream/types.js';
import { describeEachStore } from '../../support/stores.js';

/**
 * A Gemini client on an alias of two deployments whose providers speak
 * Gemini: a failure before the first byte goes to the next deployment, which
 * is called natively (its upstream model in the path, `alt=sse`), and the
 * call is billed once.
 */
describeEachStore('routing: failover for a Gemini client', (store) => {
  let dp: DeploymentPlane;
  /** The proxy's log lines (the access log among them), as written. */
  const lines: string[] = [];
  before(async () => {
    dp = await startDeploymentPlane(store, {
      logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }),
      env: { PROXY_DEPLOYMENT_FAILURES: '1000', PROXY_UPSTREAM_TTFB_MS: '300' },
    });
  });
  after(() => dp.close());
  beforeEach(() => {
    for (const f of Object.values(dp.fakes)) f.reset();
  });

  const failures: [string, Behavior][] = [
    ['503', { kind: 'error', status: 503 }],
    ['a stream whose first event is an error', { kind: 'stream-error' }],
  ];
  for (const [name, behavior] of failures) {
    it(`${name} on the first deployment → the second answers the stream, billed once`, async () => {
      const key = await seedKey(dp.cp.deps, { models: ['tg/ordered'] });
      dp.fakes.a.enqueue(behavior);
      const res = await fetch(`${dp.proxies[0]!.url}/${key.slug}/v1beta/models/tg/ordered:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': key.secret },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hello to the proxy.' }] }] }),
      });
      const text = await res.text();
      expect(res.status, text).to.equal(200);
      expect(text).to.include('"finishReason":"STOP"').and.not.include('"error"');
      expect(dp.fakes.b.requests.map((r) => `${r.path}${r.query}`)).to.deep.equal(['/v1beta/models/m-b:streamGenerateContent?alt=sse']);
      await dp.proxies[0]!.drain();
      expect((await moneyOf(dp.cp.deps, key)).entries).to.equal(1);
    });
  }

  it('a key given as ?key= is read, and no log line holds it', async () => {
    const key = await seedKey(dp.cp.deps, { models: ['tg/ordered'] });
    const res = await fetch(`${dp.proxies[0]!.url}/${key.slug}/v1beta/models/tg/ordered:generateContent?key=${key.secret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hello to the proxy.' }] }] }),
    });
    expect(res.status, await res.text()).to.equal(200);
    await dp.proxies[0]!.drain();
    const access = lines.filter((l) => l.includes(':generateContent'));
    expect(access.length).to.be.greaterThan(0);
    for (const line of lines) expect(line).not.to.include(key.secret);
    // Nor does the provider see the client's query.
    expect(dp.fakes.a.requests.at(-1)!.query).to.equal('');
  });
});
