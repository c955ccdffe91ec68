import { expect } from 'chai';
import { request, type IncomingMessage } from 'node:http';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgePath, FORMATS, keyHeaders } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';

/**
 * Starts a chunked model call whose body never ends, and resolves with the
 * answer's head if the proxy answers anyway (it must not wait for, or
 * buffer, a body it will refuse).
 */
function callWithEndlessBody(proxyUrl: string, format: WireFormat, slug: string, key: string | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${proxyUrl}${edgePath(format, slug)}`);
    const headers = { ...keyHeaders(format, key), 'transfer-encoding': 'chunked' };
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res);
      req.destroy();
    });
    req.on('error', reject);
    // The first kilobyte of a body that keeps coming.
    req.write(`{"model":"tg/sonnet","messages":[{"role":"user","content":"${'x'.repeat(1024)}`);
  });
}

describeEachStore('proxy: the key is checked before the body is read', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps);
  });
  after(() => dp.close());

  for (const format of FORMATS) {
    it(`${format}: a call without a key is refused with 401 while its body is still arriving`, async () => {
      const res = await callWithEndlessBody(dp.proxy.url, format, k.slug, undefined);
      expect(res.statusCode).to.equal(401);
      expect(res.headers['x-request-id']).to.match(/^req_/);
    });

    it(`${format}: a malformed, an unknown and another workspace's key are refused the same way`, async () => {
      for (const [slug, key] of [
        [k.slug, 'not-a-key'],
        [k.slug, `${k.secret.slice(0, -4)}AAAA`],
        ['another-workspace', k.secret],
      ] as const) {
        const res = await callWithEndlessBody(dp.proxy.url, format, slug, key);
        expect(res.statusCode, `${slug} ${key.slice(0, 6)}`).to.equal(401);
      }
    });
  }

  it('a valid key whose declared body is over the limit still gets 413 without the body being read', async () => {
    const url = new URL(`${dp.proxy.url}${edgePath('chat', k.slug)}`);
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${k.secret}`, 'content-length': String(64 * 1024 * 1024) },
        },
        (r) => {
          r.resume();
          resolve(r);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.write('{"model":');
    });
    expect(res.statusCode).to.equal(413);
  });
});
