import { join } from 'node:path';
import type { BenchContext } from '../lib/context.js';
import { runChild } from '../lib/load.js';
import { REPO_ROOT } from '../lib/procs.js';
import { fmtMiB, fmtNum } from '../lib/report.js';
import type { KeyCacheResult, KeyCacheSpec } from './key-cache-child.js';

async function runOne(ctx: BenchContext, spec: KeyCacheSpec): Promise<KeyCacheResult> {
  const args = ['--expose-gc', '--import', 'tsx', join(REPO_ROOT, 'bench/scenarios/key-cache-child.ts'), JSON.stringify(spec)];
  // The cache runs in the proxy, so it gets the proxy's core.
  return JSON.parse(await runChild(process.execPath, args, ctx.placement.sut, 'BENCH_RESULT', 300_000)) as KeyCacheResult;
}

/**
 * Scenario 4: the proxy's key cache in-process with 1k, 100k and 1M distinct
 * keys — with its shipped bound (it must never hold more), and sized to hold
 * every key (what memory a larger PROXY_KEY_CACHE_SIZE would cost).
 */
export async function keyCacheScenario(ctx: BenchContext): Promise<void> {
  const figures: (KeyCacheResult & { sizing: string })[] = [];
  for (const keys of ctx.profile.keyCacheSizes) {
    for (const bound of ctx.profile.name === 'quick' ? [null] : [null, keys]) {
      ctx.log(`key cache: ${fmtNum(keys)} keys, bound ${bound === null ? 'default' : fmtNum(bound)}`);
      const r = await runOne(ctx, { keys, bound, lookups: ctx.profile.keyCacheLookups });
      if (bound !== null && figures.some((f) => f.keys === keys && f.bound === r.bound)) continue; // default already equals this size
      figures.push({ ...r, sizing: bound === null ? 'default bound' : 'holds every key' });
    }
  }
  ctx.report.data.keyCache = figures;
  const table = ctx.report.section('Key cache (proxy/key-cache.ts in-process, source answers at once)', [
    'keys',
    'bound',
    'held',
    'fill/s',
    'lookups/s',
    'hit rate',
    'RSS Δ MiB',
    'heap Δ MiB',
    'bytes/entry',
  ]);
  for (const f of figures) {
    const heapDelta = f.heapBytes - f.heapBaseBytes;
    table.row(
      fmtNum(f.keys),
      fmtNum(f.bound),
      fmtNum(f.size),
      fmtNum(f.fillPerSecond),
      fmtNum(f.lookupsPerSecond),
      `${(f.hitRate * 100).toFixed(1)}%`,
      fmtMiB(f.rssBytes - f.rssBaseBytes),
      fmtMiB(heapDelta),
      f.size ? fmtNum(heapDelta / f.size) : '-',
    );
    ctx.report.check({
      scenario: 'key cache',
      figure: `entries held, ${fmtNum(f.keys)} keys (${f.sizing})`,
      value: f.size,
      target: `≤ bound ${fmtNum(f.bound)}`,
      pass: f.size <= f.bound,
    });
  }
  table.note(
    'Lookups pick keys uniformly at random; past the bound most are misses that fetch and evict. Δ = after the run minus before the cache existed (after GC).',
  );
}
