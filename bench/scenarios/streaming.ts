import type { StreamResult } from '../load/stream-client.js';
import { probe, type BenchContext, type Format, type System } from '../lib/context.js';
import { waitUntilIdle, withCpu } from '../lib/procs.js';
import { fmtMs, fmtNum, ratio } from '../lib/report.js';
import { runStreams } from '../lib/stream.js';

export interface StreamFigures extends StreamResult {
  system: string;
  format: Format;
  connections: number;
  /** Proxy CPU per SSE event delivered to the client, µs. */
  cpuUsPerEvent: number | undefined;
  sutCoreUse: number | undefined;
}

export async function measureStreams(
  ctx: BenchContext,
  system: System,
  format: Format,
  connections: number,
  seconds: number,
): Promise<StreamFigures> {
  const req = system.request(format, { stream: true, paced: true });
  const pids: Record<string, number> = system.pid ? { sut: system.pid } : {};
  if (system.controlPlanePid) await waitUntilIdle(system.controlPlanePid);
  const { result, cpuUs, wallUs } = await withCpu(pids, () =>
    runStreams({ url: req.url, headers: req.headers, body: req.body, connections, durationS: seconds }, ctx.placement.driver),
  );
  return {
    ...result,
    system: system.name,
    format,
    connections,
    cpuUsPerEvent: system.pid && result.events > 0 ? cpuUs.sut! / result.events : undefined,
    sutCoreUse: system.pid ? cpuUs.sut! / wallUs : undefined,
  };
}

/** Scenario 2: paced SSE (50 token events, 2 ms apart) through the proxy versus directly. */
export async function streamingScenario(ctx: BenchContext): Promise<void> {
  await ctx.upstream();
  const systems: System[] = [ctx.direct(), await ctx.bare(true)];
  try {
    systems.push((await ctx.tollgate()).system);
  } catch (err) {
    ctx.log(`tollgate unavailable, streaming measured directly only: ${(err as Error).message.split('\n')[0]}`);
  }
  for (const system of systems) {
    for (const format of ['chat', 'messages'] as Format[]) {
      const problem = await probe(system.request(format, { stream: true, paced: true }));
      if (problem) ctx.log(`  ${system.name} ${format} stream does not answer 2xx: ${problem}`);
    }
  }
  const figures: StreamFigures[] = [];
  for (const format of ['chat', 'messages'] as Format[]) {
    for (const system of systems) await measureStreams(ctx, system, format, 10, ctx.profile.warmS);
    for (const connections of [1, 50]) {
      for (const system of systems) {
        ctx.log(`streaming: ${system.name} ${format} with ${connections} concurrent stream(s)`);
        figures.push(await measureStreams(ctx, system, format, connections, ctx.profile.measureS + (ctx.profile.name === 'quick' ? 1 : 0)));
      }
    }
  }
  ctx.report.data.streaming = figures;
  const table = ctx.report.section('Streaming (paced SSE: 50 token events 2 ms apart)', [
    'system',
    'format',
    'streams',
    'done',
    'events',
    'TTFB p50',
    'TTFB p99',
    'total p50',
    'total p99',
    'CPU µs/event',
    'errors',
  ]);
  for (const f of figures) {
    table.row(
      f.system,
      f.format,
      String(f.connections),
      String(f.streams),
      String(f.events),
      fmtMs(f.ttfbUs.p50),
      fmtMs(f.ttfbUs.p99),
      fmtMs(f.totalUs.p50),
      fmtMs(f.totalUs.p99),
      f.cpuUsPerEvent === undefined ? '-' : fmtNum(f.cpuUsPerEvent),
      String(f.errors),
    );
  }
  table.note('Times in ms. TTFB = request sent → first body byte (the first SSE event). Events = SSE frames the client received.');

  for (const format of ['chat', 'messages'] as Format[]) {
    const ok = (f: StreamFigures | undefined) => (f && f.streams > 0 && f.errors <= f.streams * 0.01 ? f : undefined);
    const t1 = ok(figures.find((f) => f.system === 'tollgate' && f.format === format && f.connections === 1));
    const d1 = ok(figures.find((f) => f.system === 'direct' && f.format === format && f.connections === 1));
    const t50 = ok(figures.find((f) => f.system === 'tollgate' && f.format === format && f.connections === 50));
    const b50 = ok(figures.find((f) => f.system === 'bare' && f.format === format && f.connections === 50));
    const added = t1 && d1 ? (t1.ttfbUs.p50 - d1.ttfbUs.p50) / 1000 : NaN;
    const note = t1 && d1 ? undefined : 'not measured or failing';
    ctx.report.check({
      scenario: `streaming ${format}`,
      figure: 'added TTFB p50 ms over direct (1 stream)',
      value: added,
      target: '≤ 0.5 ms',
      pass: Number.isFinite(added) ? added <= 0.5 : undefined,
      note,
    });
    const cpu = t50?.cpuUsPerEvent ?? NaN;
    ctx.report.check({
      scenario: `streaming ${format}`,
      figure: 'proxy CPU µs per SSE event (50 streams)',
      value: cpu,
      target: '≤ 10 µs',
      pass: Number.isFinite(cpu) ? cpu <= 10 : undefined,
      note: t50 ? undefined : 'not measured or failing',
    });
    const perBare = ratio(cpu, b50?.cpuUsPerEvent ?? NaN);
    ctx.report.check({
      scenario: `streaming ${format}`,
      figure: 'proxy CPU per SSE event ÷ bare (50 streams)',
      value: perBare,
      target: '≤ 1.20×',
      pass: Number.isFinite(perBare) ? perBare <= 1.2 : undefined,
      note: t50 && b50 ? undefined : 'not measured or failing',
    });
  }
}
