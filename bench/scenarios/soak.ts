import type { BenchContext } from '../lib/context.js';
import { runLoad, type LoadResult } from '../lib/load.js';
import { cpuMicros, rssBytes } from '../lib/procs.js';
import { fmtMiB, fmtNum } from '../lib/report.js';
import { runStreams } from '../lib/stream.js';
import type { StreamResult } from '../load/stream-client.js';

/** Scenario 7: mixed streamed and non-streamed load for a while; does the proxy's memory stay flat? */
export async function soakScenario(ctx: BenchContext): Promise<void> {
  const { system, tollgate } = await ctx.tollgate();
  const pid = tollgate.proxy.pid;
  const seconds = ctx.profile.soakS;
  const plain = system.request('chat');
  const streamed = system.request('messages', { stream: true, paced: true });
  const load = (durationS: number) =>
    Promise.all([
      runLoad(
        ctx.tool,
        { url: plain.url, method: 'POST', headers: plain.headers, body: plain.body, connections: 8, durationS },
        ctx.placement.driver,
      ),
      runStreams({ url: streamed.url, headers: streamed.headers, body: streamed.body, connections: 8, durationS }, ctx.placement.driver),
    ]);
  // Warm-up first, so JIT, pools and caches have reached their working size before the first sample.
  const warmS = Math.max(5, Math.round(seconds / 30));
  ctx.log(`soak: ${warmS}s warm-up`);
  await load(warmS);
  const samples: { t: number; rss: number }[] = [];
  const t0 = Date.now();
  const cpu0 = cpuMicros(pid);
  const cpPid = tollgate.controlPlane?.pid;
  const cp0 = cpPid ? cpuMicros(cpPid) : 0;
  const sample = () => samples.push({ t: (Date.now() - t0) / 1000, rss: rssBytes(pid) });
  sample();
  const timer = setInterval(sample, 1000);
  ctx.log(`soak: ${seconds}s of mixed load (8 connections non-streamed Chat Completions + 8 paced Messages streams)`);
  let nonStreamed: LoadResult;
  let streams: StreamResult;
  try {
    [nonStreamed, streams] = await load(seconds);
  } finally {
    clearInterval(timer);
  }
  sample();
  const cpuUs = cpuMicros(pid) - cpu0;
  const wallUs = (Date.now() - t0) * 1000;
  const controlPlaneCpuUs = cpPid ? cpuMicros(cpPid) - cp0 : undefined;
  // Medians of the first and last tenth: RSS saws up and down with GC, single samples mislead.
  const tenth = Math.max(1, Math.round(samples.length / 10));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const start = median(samples.slice(0, tenth).map((s) => s.rss));
  const end = median(samples.slice(-tenth).map((s) => s.rss));
  const max = Math.max(...samples.map((s) => s.rss));
  const growth = start > 0 ? end / start - 1 : NaN;
  ctx.report.data.soak = {
    seconds,
    warmUpSeconds: warmS,
    nonStreamed,
    streams,
    cpuUs,
    controlPlaneCpuUs,
    wallUs,
    rssSamples: samples,
    rssStart: start,
    rssEnd: end,
    rssMax: max,
    growth,
  };
  const table = ctx.report.section(`Soak (${seconds}s mixed load after ${warmS}s warm-up)`, [
    'RSS start MiB',
    'RSS end MiB',
    'RSS max MiB',
    'growth',
    'non-streamed req',
    'streams',
    'proxy core',
    'CP core',
    'errors',
  ]);
  table.row(
    fmtMiB(start),
    fmtMiB(end),
    fmtMiB(max),
    `${(growth * 100).toFixed(1)}%`,
    fmtNum(nonStreamed.requests),
    fmtNum(streams.streams),
    `${Math.round((cpuUs / wallUs) * 100)}%`,
    controlPlaneCpuUs === undefined ? '-' : `${Math.round((controlPlaneCpuUs / wallUs) * 100)}%`,
    String(nonStreamed.errors + streams.errors),
  );
  table.note(
    'Mixed load: 8 connections of non-streamed Chat Completions plus 8 paced Messages streams. Start/end = median RSS of the first/last tenth of the 1 s samples.',
  );
  const failing = nonStreamed.errors > nonStreamed.requests * 0.01 || streams.errors > streams.streams * 0.01;
  ctx.report.check({
    scenario: 'soak',
    figure: 'proxy RSS growth % over the soak',
    value: growth * 100,
    target: '≤ 10 % (flat)',
    pass: failing || !Number.isFinite(growth) ? undefined : growth <= 0.1,
    note: failing ? 'requests failing' : undefined,
  });
}
