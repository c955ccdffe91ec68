import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startControlPlane } from '../../../control-plane/runtime.js';
import { createLogger } from '../../../shared/logger.js';
import { testConfig } from '../../support/control-plane.js';
import { openTestStore, resetStore, testPostgresUrl } from '../../support/stores.js';

/**
 * Proxies hold the control plane's change stream open for good. On SIGTERM
 * those streams are not calls in flight: they end at once (the proxies
 * reconnect) instead of holding the shutdown for the whole grace period.
 */
for (const [name, storeEnv] of [
  ['embedded store', async () => ({})],
  [
    'PostgreSQL',
    async () => {
      const url = await testPostgresUrl();
      if (!url) return undefined;
      await resetStore((await openTestStore('postgres'))!);
      return { DATABASE_URL: url };
    },
  ],
] as const) {
  describe(`control plane shutdown with change streams open (${name})`, function () {
    // A fresh embedded store takes a while to create on a busy machine.
    this.timeout(120_000);
    /** A control plane on this store, in a directory of its own (the test removes it). */
    async function start(ctx: Mocha.Context) {
      const env = await storeEnv();
      if (!env) {
        if (process.env.CI) throw new Error('PostgreSQL is required in CI');
        ctx.skip();
      }
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-cp-drain-'));
      const config = testConfig({ DATA_DIR: dir, ...env });
      const cp = await startControlPlane(config, createLogger('silent', 'drain-test'), { port: 0, host: '127.0.0.1' });
      return { dir, config, cp };
    }
    it('ends the change streams at once and returns within 2 s, though the grace period is 25 s', async function () {
      const { dir, config, cp } = await start(this);
      try {
        const streams = await Promise.all(
          [1, 2].map(async () => {
            const res = await fetch(`${cp.url}/internal/changes/stream`, { headers: { authorization: `Bearer ${config.dataPlaneToken}` } });
            expect(res.status).to.equal(200);
            const reader = res.body!.getReader();
            expect(Buffer.from((await reader.read()).value!).toString()).to.match(/^event: ready\n/);
            return reader;
          }),
        );
        const started = Date.now();
        await cp.close(25_000);
        const tookMs = Date.now() - started;
        expect(tookMs).to.be.lessThan(2_000);
        // Each proxy sees its stream end (and reconnects elsewhere).
        for (const reader of streams) {
          const ended = await reader.read().then(
            (r) => r.done,
            () => true,
          );
          expect(ended).to.equal(true);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a client keeping its keep-alive connection busy (a proxy polling) does not hold the shutdown for the grace period', async function () {
      const { dir, config, cp } = await start(this);
      // One connection, as the proxy's pool keeps it: a request follows the last one's answer at once.
      const pool = new Pool(cp.url, { connections: 1 });
      let polling = true;
      let answered = 0;
      const poller = (async () => {
        while (polling) {
          const res = await pool
            .request({ method: 'GET', path: '/internal/changes/version', headers: { authorization: `Bearer ${config.dataPlaneToken}` } })
            .catch(() => undefined);
          if (!res) continue;
          await res.body.dump();
          answered++;
        }
      })();
      try {
        while (answered < 20) await new Promise((r) => setTimeout(r, 10));
        const started = Date.now();
        await cp.close(25_000);
        expect(Date.now() - started).to.be.lessThan(2_000);
      } finally {
        polling = false;
        await poller;
        await pool.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
