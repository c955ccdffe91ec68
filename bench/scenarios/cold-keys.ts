import type { BatchRequest, BatchResult } from '../load/batch-client.js';
import { mapLimit, runBatch } from '../lib/batch.js';
import { tollgateRequest, type BenchContext } from '../lib/context.js';
import { withCpu } from '../lib/procs.js';
import { fmtMs, fmtNum } from '../lib/report.js';
import { createTeamKey, provision, startTollgate } from '../lib/tollgate.js';

const CONNECTIONS = 10;
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface ColdFigures extends BatchResult {
  limits: 'in-process' | 'redis';
  cache: 'cold' | 'warm';
  cpuUsPerRequest: number;
}

/**
 * Scenario 5: every request carries a key the proxy has not cached yet, so each
 * one costs a control-plane round trip. Then the same keys again (now cached)
 * as the reference, and the whole thing again with Redis-backed limits.
 */
export async function coldKeysScenario(ctx: BenchContext): Promise<void> {
  const modelsFile = await ctx.models();
  // Its own Tollgate: the shared one's cache already holds whatever earlier scenarios used.
  const first = await startTollgate({ shape: ctx.shape, placement: ctx.placement, modelsFile, controlPlaneNice: ctx.controlPlaneNice });
  ctx.track(first.proxy, ...(first.controlPlane ? [first.controlPlane] : []));
  const provisioned = await provision(first, 'bench-cold');
  const n = ctx.profile.coldKeys;
  ctx.log(`cold keys: creating ${n} keys through the console API`);
  const t0 = Date.now();
  const keys = await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    8,
    (i) => createTeamKey(provisioned.call, provisioned.teamId, `cold-${i}`),
  );
  const createS = (Date.now() - t0) / 1000;
  const slug = provisioned.org.workspace_slug;
  const batch = (edgeUrl: string): BatchRequest[] =>
    keys.map((key, i) => {
      const r = tollgateRequest(edgeUrl, slug, key, i % 2 ? 'messages' : 'chat');
      const url = new URL(r.url);
      return { method: 'POST', path: url.pathname, headers: r.headers, body: r.body };
    });

  const figures: ColdFigures[] = [];
  const measure = async (limits: ColdFigures['limits'], tollgate: typeof first) => {
    for (const cache of ['cold', 'warm'] as const) {
      ctx.log(`cold keys: ${n} requests, ${cache} cache, ${limits} limits`);
      const { result, cpuUs } = await withCpu({ sut: tollgate.proxy.pid }, () =>
        runBatch(ctx.dir, tollgate.edgeUrl, batch(tollgate.edgeUrl), CONNECTIONS, ctx.placement.driver),
      );
      figures.push({ ...result, limits, cache, cpuUsPerRequest: cpuUs.sut! / Math.max(1, result.requests - result.errors) });
    }
  };
  await measure('in-process', first);
  await first.stop();

  // Same data, fresh process: the cache is empty again, the keys are the same.
  try {
    const second = await startTollgate({
      shape: ctx.shape,
      placement: ctx.placement,
      modelsFile,
      dataDir: first.dataDir,
      redisUrl: REDIS_URL,
      controlPlaneNice: ctx.controlPlaneNice,
    });
    ctx.track(second.proxy, ...(second.controlPlane ? [second.controlPlane] : []));
    try {
      await measure('redis', second);
    } finally {
      await second.stop();
    }
  } catch (err) {
    ctx.log(`cold keys with Redis (${REDIS_URL}) failed: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    ctx.removeLater(first.dataDir);
  }

  ctx.report.data.coldKeys = { keys: n, keyCreateSeconds: createS, connections: CONNECTIONS, figures };
  const table = ctx.report.section(`Cold keys (${n} distinct keys, one request each, ${CONNECTIONS} connections)`, [
    'limits',
    'key cache',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'errors',
  ]);
  for (const f of figures) {
    table.row(
      f.limits,
      f.cache,
      fmtNum(f.rps),
      fmtMs(f.latencyUs.p50),
      fmtMs(f.latencyUs.p99),
      fmtNum(f.cpuUsPerRequest),
      f.errors ? `${f.errors} ${JSON.stringify(f.statuses)}` : '0',
    );
  }
  table.note(`keys created through the console API at ${fmtNum(n / createS)}/s (8 in flight)`);
}
