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
  const samples: { t: number; rss: number }[] = [];
  const t0 = Date.now();
  const cpu0 = cpuMicros(pid);
  const sample = () => samples.push({ t: (Date.now() - t0) / 1000, rss: rssBytes(pid) });
  sample();
  const timer = setInterval(sample, 1000);
  ctx.log(`soak: ${seconds}s of mixed load (8 connections non-streamed Chat Completions + 8 paced Messages streams)`);
  let nonStreamed: LoadResult;
  let streams: StreamResult;
  try {
    [nonStreamed, streams] = await Promise.all([
      runLoad(ctx.tool, { url: plain.url, method: 'POST', headers: plain.headers, body: plain.body, connections: 8, durationS: seconds }, ctx.placement.driver),
      runStreams({ url: streamed.url, headers: streamed.headers, body: streamed.body, connections: 8, durationS: seconds }, ctx.placement.driver),
    ]);
  } finally {
    clearInterval(timer);
  }
  sample();
  const cpuUs = cpuMicros(pid) - cpu0;
  // Start is taken after a tenth of the run, once JIT and pools have settled.
  const warmIndex = Math.min(samples.length - 1, Math.max(1, Math.round(samples.length / 10)));
  const start = samples[warmIndex]!.rss;
  const end = samples[samples.length - 1]!.rss;
  const max = Math.max(...samples.map((s) => s.rss));
  const growth = start > 0 ? end / start - 1 : NaN;
  ctx.report.data.soak = { seconds, nonStreamed, streams, cpuUs, rssSamples: samples, rssAtZero: samples[0]!.rss, rssStart: start, rssEnd: end, rssMax: max, growth };
  const table = ctx.report.section(`Soak (${seconds}s mixed load)`, ['RSS t=0 MiB', `RSS t=${samples[warmIndex]!.t.toFixed(0)}s MiB`, 'RSS end MiB', 'RSS max MiB', 'growth', 'non-streamed req', 'streams', 'errors']);
  table.row(
    fmtMiB(samples[0]!.rss), fmtMiB(start), fmtMiB(end), fmtMiB(max), `${(growth * 100).toFixed(1)}%`,
    fmtNum(nonStreamed.requests), fmtNum(streams.streams), String(nonStreamed.errors + streams.errors),
  );
  const failing = nonStreamed.errors > nonStreamed.requests * 0.01 || streams.errors > streams.streams * 0.01;
  ctx.report.check({
    scenario: 'soak', figure: 'proxy RSS growth, settled start → end', value: growth * 100, target: '≤ 10 % (flat)',
    pass: failing || !Number.isFinite(growth) ? undefined : growth <= 0.1,
    note: failing ? 'requests failing' : undefined,
  });
}
