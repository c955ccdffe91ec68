/**
 * Observer child: the proxy's per-request observation (proxy/observe.ts) in
 * isolation, as the edge drives it for one answered call, with each part on
 * in turn. What it prints is CPU time per request, free of the network and of
 * whatever else shares the machine's cores at the time (which swamps a 5 %
 * difference in the end-to-end figures on a busy box).
 *
 *   node --import tsx bench/scenarios/observer-child.ts '{"calls":200000,"sink":"http://127.0.0.1:4318"}'
 */
import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { createMetricsRegistry } from '../../shared/metrics.js';
import { createTracing } from '../../shared/tracing.js';
import { createProxyMetrics } from '../../proxy/metrics.js';
import { createEdgeObserver, type EdgeObserver, type ObserverParts } from '../../proxy/observe.js';
import { createSettlementWatch } from '../../proxy/money/settlement-watch.js';
import { BENCH_MODEL } from '../lib/model.js';

export interface ObserverSpec {
  calls: number;
  /** An OTLP/HTTP endpoint that accepts spans, for the tracing variant. */
  sink: string;
}

export interface ObserverResult {
  variant: string;
  cpuUsPerRequest: number;
}

const REQUEST = { headers: { 'content-type': 'application/json', authorization: 'Bearer x' } } as unknown as IncomingMessage;

/** One answered non-streamed call, with the stamps and fields the edge sets. */
function oneCall(observe: EdgeObserver, i: number): void {
  const call = observe.begin(REQUEST, `req_${i}`);
  call.format = 'chat';
  call.route = 'call';
  call.keyStartAt = performance.now();
  call.keyAt = performance.now();
  call.keyId = '0b5a6a4e-0000-4000-8000-000000000000';
  call.workspaceId = '1c6b7b5f-0000-4000-8000-000000000000';
  call.model = BENCH_MODEL;
  call.admittedAt = performance.now();
  const headers: string[] = [];
  observe.upstream(call, headers);
  call.headAt = performance.now();
  call.upstreamEndAt = performance.now();
  call.outcome = 'complete';
  call.inputTokens = 340;
  call.outputTokens = 12;
  call.costMicros = 1200;
  call.settledAt = performance.now();
  observe.end(call, 200);
}

function measure(observe: EdgeObserver, calls: number): number {
  for (let i = 0; i < 20_000; i++) oneCall(observe, i);
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) oneCall(observe, i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as ObserverSpec;
  const variants: [string, () => ObserverParts][] = [
    ['nothing on', () => ({})],
    [
      'metrics',
      () => {
        const metrics = createProxyMetrics(createMetricsRegistry(), {});
        return { metrics, settlements: createSettlementWatch(metrics) };
      },
    ],
    [
      'metrics + access log',
      () => {
        const metrics = createProxyMetrics(createMetricsRegistry(), {});
        // The access log as the proxy writes it, into /dev/null so the pipe's reader is not measured.
        const accessLog = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
        return { metrics, settlements: createSettlementWatch(metrics), accessLog };
      },
    ],
    [
      'metrics + tracing',
      () => {
        const metrics = createProxyMetrics(createMetricsRegistry(), {});
        return { metrics, settlements: createSettlementWatch(metrics), tracing: createTracing(`${spec.sink}/v1/traces`, 'bench') };
      },
    ],
  ];
  const results: ObserverResult[] = [];
  for (const [variant, parts] of variants) {
    const observe = createEdgeObserver(parts());
    results.push({ variant, cpuUsPerRequest: measure(observe, spec.calls) });
    await observe.close();
  }
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(results)}\n`);
}

await main();
