import { expect } from 'chai';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { describeEachStore } from '../../support/stores.js';
import { redisForTests, seedKey, startDataPlane, TEST_REDIS_URL, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, ERROR_TYPES, errorType, FORMATS, modelBody } from '../../support/edge-calls.js';

/** A TCP relay to the real Redis that the test can cut, as an outage would. */
async function startRelay(): Promise<{ url: string; cut(): Promise<void> }> {
  const target = new URL(TEST_REDIS_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    async cut() {
      await new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

describeEachStore('proxy: Redis outage policy', (store) => {
  let dp: DataPlane | undefined;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  before(async function () {
    const prefix = await redisForTests('Redis outage policy');
    if (!prefix) return this.skip();
    relay = await startRelay();
    dp = await startDataPlane(store, { env: { REDIS_URL: relay.url, PROXY_REDIS_PREFIX: prefix } });
  });
  after(() => dp?.close());

  it('budget checks fail closed: with Redis gone, model calls get 503 in each format and nothing is forwarded', async () => {
    const { cp, fake, proxy } = dp!;
    const k = await seedKey(cp.deps, { rpm: 100 });
    for (const format of FORMATS) expect((await edgeCall(proxy.url, format, k.slug, k.secret, modelBody(format))).status).to.equal(200);
    await proxy.drain();
    await relay.cut();
    fake.reset();
    for (const format of FORMATS) {
      const a = await edgeCall(proxy.url, format, k.slug, k.secret, modelBody(format));
      expect(a.status, a.text).to.equal(503);
      expect(errorType(format, a)).to.equal(ERROR_TYPES[503][format]);
      // The rate limit still answered (from the per-process fallback): its headers are there.
      expect(a.headers.get('x-ratelimit-limit-requests')).to.equal('100');
    }
    expect(fake.requests).to.have.length(0);
  });
});
