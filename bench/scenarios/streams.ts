import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamsMark, StreamsResult, StreamsSpec } from '../load/streams-client.js';
import { startPassThrough, tollgateRequest, upstreamRequest, type BenchContext, type RequestShape } from '../lib/context.js';
import { runChild } from '../lib/load.js';
import { cpuMicros, freePort, nodeArgs, readyWhenPrinted, REPO_ROOT, rssBytes, startProcess, waitUntilIdle, type Proc } from '../lib/procs.js';
import { fmtMiB, fmtMs, fmtNum } from '../lib/report.js';
import { ensureOpenFiles, readOverflows } from '../lib/sockets.js';
import { provision, startTollgate, writeModelsFile } from '../lib/tollgate.js';

/** How many streams, how long each, how fast they open. */
export interface StreamsPlan {
  streams: number;
  /** Events per stream, one a second: the stream's length in seconds. */
  events: number;
  rampS: number;
}

export const STREAMS_PLANS: Record<'full' | 'quick', StreamsPlan> = {
  // Opened over 30 s: a faster ramp overflowed the proxy's accept queue on a loaded machine (resets, SYN timeouts).
  full: { streams: 5_000, events: 60, rampS: 30 },
  quick: { streams: 300, events: 12, rampS: 3 },
};

/** One second's reading: the client's mark and the system's CPU and RSS at that moment. */
export interface StreamsSample extends StreamsMark {
  cpuUs: number;
  rssBytes: number;
}

export interface Plateau {
  /** Seconds the plateau lasted (every stream open, or as many as ever were). */
  seconds: number;
  cpuUsPerEvent: number;
  peakRssBytes: number;
  medianRssBytes: number;
}

/**
 * The stretch where (nearly) every stream was open at once: from the first
 * second at least 98% of the most ever open were open to the last. CPU per
 * event over it counts only delivering events, not opening or closing streams.
 */
export function plateauOf(samples: StreamsSample[]): Plateau {
  const most = Math.max(0, ...samples.map((s) => s.open));
  const on = samples.filter((s) => most > 0 && s.open >= most * 0.98);
  const first = on[0];
  const last = on[on.length - 1];
  const rss = on.map((s) => s.rssBytes).sort((a, b) => a - b);
  return {
    seconds: first && last ? last.t - first.t : 0,
    cpuUsPerEvent: first && last && last.events > first.events ? (last.cpuUs - first.cpuUs) / (last.events - first.events) : NaN,
    peakRssBytes: rss.length ? rss[rss.length - 1]! : NaN,
    medianRssBytes: rss.length ? rss[Math.floor(rss.length / 2)]! : NaN,
  };
}

export interface StreamsProjection {
  streams: number;
  rssBytes: number;
  /** Cores spent delivering one event a second on each stream. */
  cores: number;
  /** A proxied stream holds two sockets: the client's and the provider's. */
  openFiles: number;
}

/**
 * What opening and closing a stream costs the proxy, beyond its events: the
 * whole run's CPU less the events' share at the plateau's rate, per stream.
 */
export function cpuPerStream(totalCpuUs: number, events: number, cpuUsPerEvent: number, streams: number): number {
  return streams > 0 && Number.isFinite(cpuUsPerEvent) ? (totalCpuUs - events * cpuUsPerEvent) / streams : NaN;
}

/** What `streams` open at once would need of one proxy, from the per-stream figures. */
export function projectStreams(streams: number, idleRssBytes: number, rssPerStreamBytes: number, cpuUsPerEvent: number): StreamsProjection {
  return {
    streams,
    rssBytes: idleRssBytes + streams * rssPerStreamBytes,
    cores: (streams * cpuUsPerEvent) / 1e6,
    openFiles: 2 * streams + 100,
  };
}

export interface StreamsFigures {
  system: 'bare' | 'tollgate';
  result: StreamsResult;
  plateau: Plateau;
  idleRssBytes: number;
  /** (median RSS on the plateau − idle) ÷ streams open: the steady cost of an open stream. */
  rssPerStreamBytes: number;
  /** The same from the plateau's peak, which also holds garbage a collection had not yet freed. */
  peakRssPerStreamBytes: number;
  /** Accept-queue overflows on the machine while the streams opened (see `listenOverflows`). */
  listenOverflows: number;
  /** Proxy CPU to open and close one stream, beyond its events (see `cpuPerStream`). */
  cpuUsPerStream: number;
  /** Control-plane CPU per stream settled (Tollgate split only). */
  controlPlaneCpuUsPerStream: number | undefined;
}

/** A streamed chat request asking the ticking upstream for `events` events. */
function asking(req: RequestShape, events: number): RequestShape {
  return { ...req, body: JSON.stringify({ ...(JSON.parse(req.body) as object), max_tokens: events }) };
}

async function measure(
  ctx: BenchContext,
  system: StreamsFigures['system'],
  pid: number,
  controlPlanePid: number | undefined,
  req: RequestShape,
  plan: StreamsPlan,
): Promise<StreamsFigures> {
  const run = (spec: StreamsSpec, onLine?: (line: string) => void) => {
    const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/load/streams-client.ts'), [JSON.stringify(spec)]);
    return runChild(node, args, ctx.placement.driver, 'BENCH_RESULT', (spec.events + spec.rampS + 120) * 1000, onLine).then(
      (raw) => JSON.parse(raw) as StreamsResult,
    );
  };
  ctx.log(`streams: warming ${system}`);
  await run({ url: req.url, headers: req.headers, body: asking(req, 3).body, streams: Math.min(50, plan.streams), rampS: 0.5, events: 3 });
  if (controlPlanePid) await waitUntilIdle(controlPlanePid);
  await waitUntilIdle(pid, 5_000);
  const idleRssBytes = rssBytes(pid);
  const cp0 = controlPlanePid ? cpuMicros(controlPlanePid) : 0;
  const cpu0 = cpuMicros(pid);
  const samples: StreamsSample[] = [];
  const overflows0 = readOverflows();
  ctx.log(`streams: ${system}, ${plan.streams} streams of ${plan.events} events, one a second`);
  const result = await run({ url: req.url, headers: req.headers, body: asking(req, plan.events).body, ...plan }, (line) => {
    if (!line.startsWith('BENCH_MARK ')) return;
    const mark = JSON.parse(line.slice('BENCH_MARK '.length)) as StreamsMark;
    samples.push({ ...mark, cpuUs: cpuMicros(pid), rssBytes: rssBytes(pid) });
  });
  const overflows = readOverflows() - overflows0;
  const runCpuUs = cpuMicros(pid) - cpu0;
  if (controlPlanePid) await waitUntilIdle(controlPlanePid);
  const plateau = plateauOf(samples);
  const mostOpen = Math.max(0, ...samples.map((s) => s.open));
  return {
    system,
    result,
    plateau,
    idleRssBytes,
    listenOverflows: overflows,
    rssPerStreamBytes: mostOpen > 0 ? (plateau.medianRssBytes - idleRssBytes) / mostOpen : NaN,
    peakRssPerStreamBytes: mostOpen > 0 ? (plateau.peakRssBytes - idleRssBytes) / mostOpen : NaN,
    cpuUsPerStream: cpuPerStream(runCpuUs, result.events, plateau.cpuUsPerEvent, result.streams),
    controlPlaneCpuUsPerStream: controlPlanePid && result.done > 0 ? (cpuMicros(controlPlanePid) - cp0) / result.done : undefined,
  };
}

/**
 * Issue 27's load: many concurrent slow streams (an event a second, as an
 * LLM answers) on one proxy, through Tollgate and through the bare
 * pass-through in the same run. Memory per open stream, CPU per event, and
 * how late each event arrives (the upstream stamps it, the client reads the
 * stamp) over what the bare pass-through adds.
 */
export async function streamsScenario(ctx: BenchContext): Promise<void> {
  const plan = { ...STREAMS_PLANS[ctx.profile.name] };
  // The client holds one socket per stream, the upstream one, each proxy two.
  const limit = Math.min(ensureOpenFiles(process.pid, plan.streams + 200), 20_000);
  const port = await freePort();
  const [node, args] = nodeArgs('bench/load/ticking-upstream.ts', ['--port', String(port)]);
  const upstream: Proc = await startProcess('ticking upstream', node, args, { cpus: ctx.placement.driver, ready: readyWhenPrinted(/listening on/) });
  ctx.track(upstream);
  const upstreamUrl = `http://127.0.0.1:${port}`;
  const bare = await startPassThrough('bare', upstreamUrl, ctx.placement.sut);
  ctx.track(bare);
  const dir = mkdtempSync(join(ctx.dir, 'streams-'));
  const tollgate = await startTollgate({ shape: ctx.shape, placement: ctx.placement, modelsFile: writeModelsFile(dir, upstreamUrl, upstreamUrl) });
  ctx.track(...(tollgate.controlPlane ? [tollgate.controlPlane] : []), tollgate.proxy);
  ctx.removeLater(tollgate.dataDir);
  const provisioned = await provision(tollgate, 'bench-streams');
  const fits = Math.min(
    limit - 200,
    ensureOpenFiles(upstream.pid, plan.streams + 200) - 200,
    Math.floor((ensureOpenFiles(bare.pid, 2 * plan.streams + 200) - 200) / 2),
    Math.floor((ensureOpenFiles(tollgate.proxy.pid, 2 * plan.streams + 200) - 200) / 2),
  );
  if (fits < plan.streams) {
    ctx.log(`streams: open-files limits allow ${fits} streams, not ${plan.streams}`);
    plan.streams = fits;
  }
  const figures: StreamsFigures[] = [];
  try {
    figures.push(await measure(ctx, 'bare', bare.pid, undefined, upstreamRequest(bare.url, 'chat', 'bench-model', true), plan));
    const req = tollgateRequest(tollgate.edgeUrl, provisioned.org.workspace_slug, provisioned.key, 'chat', { stream: true });
    figures.push(await measure(ctx, 'tollgate', tollgate.proxy.pid, tollgate.controlPlane?.pid, req, plan));
  } finally {
    await tollgate.stop();
    await bare.stop();
    await upstream.stop();
  }
  report(ctx, plan, figures);
}

function report(ctx: BenchContext, plan: StreamsPlan, figures: StreamsFigures[]): void {
  ctx.report.data.streams = { plan, figures };
  const table = ctx.report.section(
    `Streams: ${plan.streams.toLocaleString('en-US')} concurrent streams, ${plan.events} events each one a second, opened over ${plan.rampS} s (Chat Completions)`,
    [
      'system',
      'done',
      'errors',
      'idle MiB',
      'median MiB',
      'peak MiB',
      'KiB/stream',
      'peak KiB/stream',
      'CPU µs/event',
      'delay p50',
      'p99',
      'p99.9',
      'max',
      'CPU µs/stream',
      'CP µs/stream',
      'accept overflows',
    ],
  );
  for (const f of figures) {
    table.row(
      f.system,
      `${f.result.done}/${f.result.streams}`,
      String(f.result.errors),
      fmtMiB(f.idleRssBytes),
      fmtMiB(f.plateau.medianRssBytes),
      fmtMiB(f.plateau.peakRssBytes),
      fmtNum(f.rssPerStreamBytes / 1024),
      fmtNum(f.peakRssPerStreamBytes / 1024),
      fmtNum(f.plateau.cpuUsPerEvent),
      fmtMs(f.result.delayUs.p50),
      fmtMs(f.result.delayUs.p99),
      fmtMs(f.result.delayUs.p999),
      fmtMs(f.result.delayUs.max),
      fmtNum(f.cpuUsPerStream),
      f.controlPlaneCpuUsPerStream === undefined ? '-' : fmtNum(f.controlPlaneCpuUsPerStream),
      fmtNum(f.listenOverflows),
    );
    for (const [why, n] of Object.entries(f.result.failures)) table.note(`${f.system}: ${n} × ${why}`);
  }
  table.note(
    'Delay (ms) = the upstream writing an event → the client reading it (one monotonic clock). KiB/stream = (median RSS while all were open − idle) ÷ streams open; peak: the same from the highest reading. ' +
      'CPU µs/event = the proxy process over the seconds all streams were open ÷ events delivered then; ' +
      'CPU µs/stream = its CPU over the whole run less the events at that rate, per stream (opening, admitting, closing, settling). ' +
      'Accept overflows = connections the kernel dropped, machine-wide, for a full accept queue (a server not accepting fast enough): they surface as resets and connect timeouts.',
  );
  const bare = figures.find((f) => f.system === 'bare');
  const t = figures.find((f) => f.system === 'tollgate');
  if (t) {
    const projections = ctx.report.section("Streams: one Tollgate proxy at more streams, from this run's per-stream figures", [
      'streams',
      'RSS MiB',
      'cores for events',
      'open files',
      'within 20,000 open files',
    ]);
    for (const n of [plan.streams, 10_000, 50_000]) {
      const p = projectStreams(n, t.idleRssBytes, t.rssPerStreamBytes, t.plateau.cpuUsPerEvent);
      projections.row(
        n.toLocaleString('en-US'),
        fmtMiB(p.rssBytes),
        fmtNum(p.cores),
        p.openFiles.toLocaleString('en-US'),
        p.openFiles <= 20_000 ? 'yes' : 'no',
      );
    }
    projections.note(
      'Open files: two sockets per proxied stream. Past the hard limit a proxy needs a raised limit (LimitNOFILE, ulimit -Hn) or more proxies behind the load balancer.',
    );
    ctx.report.data.streamsProjections = [10_000, 50_000].map((n) => projectStreams(n, t.idleRssBytes, t.rssPerStreamBytes, t.plateau.cpuUsPerEvent));
  }
  const kib = (t?.rssPerStreamBytes ?? NaN) / 1024;
  ctx.report.check({
    scenario: 'streams',
    figure: `proxy RSS above idle per open stream (KiB, ${plan.streams} streams)`,
    value: kib,
    target: '≤ 64',
    pass: Number.isFinite(kib) ? kib <= 64 : undefined,
    note: t ? undefined : 'not measured',
  });
  // Delays are compared only between runs that carried (nearly) every stream: failed streams carry no late events.
  const whole = (f: StreamsFigures | undefined) => f && f.result.errors <= f.result.streams * 0.01;
  const added = whole(t) && whole(bare) ? (t!.result.delayUs.p99 - bare!.result.delayUs.p99) / 1000 : NaN;
  ctx.report.check({
    scenario: 'streams',
    figure: 'added event delay p99 over bare (ms)',
    value: added,
    target: '≤ 5',
    pass: Number.isFinite(added) ? added <= 5 : undefined,
    note: t && bare ? (Number.isFinite(added) ? undefined : 'over 1% of streams failed') : 'not measured',
  });
  ctx.report.check({
    scenario: 'streams',
    figure: 'streams failed through the proxy',
    value: t?.result.errors ?? NaN,
    target: '0',
    pass: t ? t.result.errors === 0 : undefined,
    note: t ? undefined : 'not measured',
  });
}
