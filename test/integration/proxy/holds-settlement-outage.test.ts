import { expect } from 'chai';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { costMicros, estimateInputTokens } from '../../../proxy/money/cost.js';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { countInputTokens } from '../../support/fake-upstream/index.js';
import { DEFAULT_OUTPUT_TOKENS } from '../../support/fake-upstream/usage.js';
import { testConfig } from '../../support/control-plane.js';
import { redisForTests, seedKey, startDataPlane, startTestProxy, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { describeEachStore } from '../../support/stores.js';

/**
 * A relay in front of the control plane that, while `down`, answers every
 * usage report with 503: settlement cannot commit (the control plane's
 * database is away), while keys already known keep resolving from the
 * proxy's cache and everything else passes through.
 */
async function settlementRelay(target: string): Promise<{ url: string; down: boolean; close(): Promise<void> }> {
  const to = new URL(target);
  const state = { down: false };
  const server: Server = createServer((req, res) => {
    if (state.down && req.url?.startsWith('/internal/usage')) {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"database unavailable"}');
      return;
    }
    const out = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const SONNET = testConfig().models.models.get('tg/sonnet')!;
// How long settlement is away; MONEY_OUTAGE_MS=10000 measures the 10 s outage.
const OUTAGE_MS = Number(process.env.MONEY_OUTAGE_MS ?? 1_500);

/**
 * Settlement stops committing while sequential traffic continues. A call
 * that ended holds what it cost, not its worst case, so calls are served
 * until the real spend reaches the key's budget (not until the worst cases
 * of every call since the outage do); once settlement returns, every served
 * call is billed exactly once. On both hold stores.
 */
describeEachStore('proxy: a settlement outage blocks only what was really spent', (store) => {
  for (const holdStore of ['memory', 'redis'] as const) {
    describe(`[${holdStore} holds]`, () => {
      let dp: DataPlane;
      let relay: Awaited<ReturnType<typeof settlementRelay>>;
      let proxy: RunningProxy;

      before(async function () {
        this.timeout(30_000);
        // A minimum output at the calls' own ceiling: no call is lowered, so admission counts whole worst cases, as this arithmetic does.
        const env: NodeJS.ProcessEnv = { PROXY_SETTLE_RETRY_MAX_MS: '200', PROXY_MIN_OUTPUT_TOKENS: '1000' };
        if (holdStore === 'redis') {
          const prefix = await redisForTests('settlement outage on Redis holds');
          if (!prefix) return this.skip();
          Object.assign(env, { REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379', PROXY_REDIS_PREFIX: prefix });
        }
        dp = await startDataPlane(store, { proxies: [] });
        relay = await settlementRelay(dp.cp.url);
        proxy = await startTestProxy({ ...dp.cp, url: relay.url }, dp.fake, env);
      });
      after(async () => {
        await proxy?.close(1_000);
        await relay?.close();
        await dp?.close();
      });

      it('serves calls until the real spend reaches the budget, then bills every served call exactly once', async function () {
        this.timeout(OUTAGE_MS + 60_000);
        const body = modelBody('chat', { max_tokens: 1_000 });
        const hold = costMicros(SONNET, estimateInputTokens(Buffer.byteLength(JSON.stringify(body))), 1_000);
        const cost = countInputTokens(body) * 3 + DEFAULT_OUTPUT_TOKENS * 15;
        // Room for the worst case of one call in flight and twenty finished ones at what they really cost.
        const budgetMicros = hold + 20 * cost;
        const key = await seedKey(dp.cp.deps, { budgetUsd: budgetMicros / 1e6 });
        // A first call settles normally: the key is known to the proxy before the control plane's database goes.
        const warm = await edgeCall(proxy.url, 'chat', key.slug, key.secret, body);
        expect(warm.status, warm.text).to.equal(200);
        await proxy.drain();

        relay.down = true;
        let served = 1;
        let refused = 0;
        const until = Date.now() + OUTAGE_MS;
        // At least the outage's length, and on past it until the refusals have begun however slow the machine is.
        while (Date.now() < until || (refused < 3 && served < 100)) {
          const answer = await edgeCall(proxy.url, 'chat', key.slug, key.secret, body);
          if (answer.status === 200) served++;
          else if (answer.status === 402) refused++;
          else expect.fail(`unexpected ${answer.status}: ${answer.text}`);
        }
        relay.down = false;
        console.log(`      settlement away ${OUTAGE_MS} ms: ${served} served, ${refused} refused (hold ${hold} µ$, cost ${cost} µ$)`);

        // Admitted while the budget minus what finished calls cost still covers one worst case: 21 calls, the warm one included.
        expect(served).to.equal(Math.floor((budgetMicros - hold) / cost) + 1);
        expect(refused).to.be.above(0);
        await proxy.drain();
        const [row] = await store.db.query<{ entries: number; billed: string; spend: string }>(
          `SELECT count(*)::int AS entries, coalesce(sum(abs(l.amount_usd)), 0)::text AS billed, max(k.spend_usd)::text AS spend
             FROM ledger_entries l JOIN api_keys k ON k.id = l.key_id WHERE l.key_id = $1 AND l.kind = 'usage' AND l.amount_usd <> 0`,
          [key.keyId],
        );
        expect(row!.entries).to.equal(served);
        expect(Number(row!.billed)).to.be.closeTo((served * cost) / 1e6, 1e-12);
        expect(Number(row!.spend)).to.be.closeTo((served * cost) / 1e6, 1e-12);
      });
    });
  }
});
