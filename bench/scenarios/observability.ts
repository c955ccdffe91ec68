import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runChild } from '../lib/load.js';
import { REPO_ROOT } from '../lib/procs.js';
import { tollgateRequest, type BenchContext, type Format, type System } from '../lib/context.js';
import { fmtMs, fmtNum, ratio } from '../lib/report.js';
import { startProxyVariant } from '../lib/tollgate.js';
import type { ObserverResult, ObserverSpec } from './observer-child.js';
import { measureLoad, type LoadFigures } from './overhead.js';

/** The same proxy four ways; only what differs from the shipped defaults is set. */
const VARIANTS: { name: string; env: NodeJS.ProcessEnv }[] = [
  { name: 'metrics off', env: { METRICS_ENABLED: 'false' } },
  { name: 'metrics on', env: {} },
  { name: 'metrics + access log', env: { LOG_LEVEL: 'info' } },
  { name: 'metrics + tracing', env: {} },
];

/** Rounds of the variants in turn, so a noisy moment on the shared machine hits them all. */
const ROUNDS = 3;

/** An OTLP/HTTP endpoint that takes the spans and drops them. */
async function startSpanSink(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Proxy CPU per non-streamed request with metrics off, on (the default), on
 * with the info-level access log, and on with tracing exported over OTLP.
 * Every variant is its own proxy process on the SUT core over one control
 * plane; they are measured one at a time, round after round, at 50
 * connections, and the median per variant is compared with metrics off.
 */
export async function observabilityScenario(ctx: BenchContext): Promise<void> {
  const { tollgate, provisioned } = await ctx.tollgate();
  const sink = await startSpanSink();
  try {
    await observerCost(ctx, sink.url);
  } catch (err) {
    ctx.log(`observability: the in-process observer measurement failed: ${(err as Error).message}`);
  }
  const systems: { name: string; system: System }[] = [];
  try {
    for (const v of VARIANTS) {
      const env = v.name === 'metrics + tracing' ? { ...v.env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : v.env;
      ctx.log(`observability: starting proxy (${v.name})`);
      const { proxy, edgeUrl } = await startProxyVariant(tollgate, `proxy (${v.name})`, env, ctx.placement);
      ctx.track(proxy);
      systems.push({
        name: v.name,
        system: {
          name: 'tollgate',
          pid: proxy.pid,
          controlPlanePid: tollgate.controlPlane?.pid,
          request: (format, o = {}) => tollgateRequest(edgeUrl, provisioned.org.workspace_slug, provisioned.key, format, o),
        },
      });
    }
    const runs: (LoadFigures & { variant: string; round: number })[] = [];
    for (const format of ['chat', 'messages'] as Format[]) {
      for (const s of systems) await measureLoad(ctx, s.system, format, 50, ctx.profile.warmS);
      for (let round = 1; round <= ROUNDS; round++) {
        for (const s of systems) {
          ctx.log(`observability: ${s.name} ${format}, round ${round}`);
          runs.push({ ...(await measureLoad(ctx, s.system, format, 50, ctx.profile.measureS)), variant: s.name, round });
        }
      }
    }
    ctx.report.data.observability = runs;
    const table = ctx.report.section('Observability cost (non-streamed, 50 conns, median of rounds)', [
      'variant',
      'format',
      'req/s',
      'p50 ms',
      'p99 ms',
      'CPU µs/req',
      '÷ metrics off',
      'errors',
    ]);
    for (const format of ['chat', 'messages'] as Format[]) {
      const of = (variant: string) => runs.filter((r) => r.format === format && r.variant === variant);
      const cpu = (variant: string) => median(of(variant).map((r) => r.cpuUsPerRequest ?? NaN));
      const base = cpu('metrics off');
      for (const v of VARIANTS) {
        const rs = of(v.name);
        const errors = rs.reduce((n, r) => n + r.errors, 0);
        table.row(
          v.name,
          format,
          fmtNum(median(rs.map((r) => r.rps))),
          fmtMs(median(rs.map((r) => r.latencyUs.p50))),
          fmtMs(median(rs.map((r) => r.latencyUs.p99))),
          fmtNum(cpu(v.name)),
          `${ratio(cpu(v.name), base).toFixed(3)}×`,
          errors ? `${errors}/${rs.reduce((n, r) => n + r.requests, 0)}` : '0',
        );
      }
      const on = ratio(cpu('metrics on'), base);
      ctx.report.check({
        scenario: `observability ${format}`,
        figure: 'proxy CPU/req, metrics on ÷ off',
        value: on,
        target: '≤ 1.05×',
        pass: Number.isFinite(on) ? on <= 1.05 : undefined,
      });
      const traced = ratio(cpu('metrics + tracing'), base);
      ctx.report.check({
        scenario: `observability ${format}`,
        figure: 'proxy CPU/req, tracing on ÷ metrics off',
        value: traced,
        target: '(report)',
        pass: undefined,
      });
    }
    table.note(`Each variant is its own proxy process on the SUT core; ${ROUNDS} rounds of the four in turn, medians shown.`);
    table.note(
      'Access log: one info line per request to stdout (a pipe read by the bench). Tracing: every request traced, exported over OTLP/HTTP to a sink in the bench process.',
    );
  } finally {
    sink.close();
  }
}

/** The observer alone, in a child on the proxy's core: CPU per request of each part, against end-to-end CPU per request. */
async function observerCost(ctx: BenchContext, sink: string): Promise<void> {
  const spec: ObserverSpec = { calls: ctx.profile.name === 'quick' ? 100_000 : 300_000, sink };
  ctx.log('observability: the observer in-process');
  const args = ['--import', 'tsx', join(REPO_ROOT, 'bench/scenarios/observer-child.ts'), JSON.stringify(spec)];
  const results = JSON.parse(await runChild(process.execPath, args, ctx.placement.sut, 'BENCH_RESULT', 300_000)) as ObserverResult[];
  ctx.report.data.observerCost = results;
  // The end-to-end figure the added cost is a share of: the overhead scenario's, when it ran.
  const overhead = (ctx.report.data.overhead as LoadFigures[] | undefined)?.find(
    (f) => f.system === 'tollgate' && f.format === 'chat' && f.connections === 50,
  );
  const perRequest = overhead?.cpuUsPerRequest ?? REFERENCE_CPU_US;
  const base = results.find((r) => r.variant === 'nothing on')!.cpuUsPerRequest;
  const table = ctx.report.section('Observer cost in-process (proxy/observe.ts per answered call)', [
    'variant',
    'CPU µs/req',
    'added µs',
    'added ÷ proxy CPU/req',
  ]);
  for (const r of results) {
    const added = r.cpuUsPerRequest - base;
    table.row(r.variant, r.cpuUsPerRequest.toFixed(2), added.toFixed(2), `${((added / perRequest) * 100).toFixed(1)}%`);
  }
  table.note(
    `Proxy CPU/req for the share: ${overhead ? "this run's overhead scenario (chat, 50 conns)" : 'the quiet-machine reference in docs/bench.md'}, ${perRequest.toFixed(0)} µs.`,
  );
  const metricsAdded = results.find((r) => r.variant === 'metrics')!.cpuUsPerRequest - base;
  ctx.report.check({
    scenario: 'observability',
    figure: 'metrics CPU added ÷ proxy CPU/req (in-process)',
    value: metricsAdded / perRequest,
    target: '≤ 0.05',
    pass: metricsAdded / perRequest <= 0.05,
  });
}

/** Proxy CPU per non-streamed request on the quiet-machine full run (docs/bench.md). */
const REFERENCE_CPU_US = 119;
