/**
 * Many-streams load child: opens `streams` slow streams (each its own
 * socket), spread evenly over `rampS`, and holds them until the upstream
 * ends them. Every event carries the moment the upstream wrote it; the delay
 * to its arrival here is one sample. Once a second it prints a
 * `BENCH_MARK` line (streams open, events so far) so the parent can read the
 * system's CPU and memory at the same moments; at the end a `BENCH_RESULT`.
 */
import { Agent, request } from 'node:http';
import type { Latency } from '../lib/load.js';
import { latencyOf, Samples } from '../lib/stats.js';
import { TickReader } from '../lib/ticks.js';

export interface StreamsSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  streams: number;
  rampS: number;
  /** Events each stream should carry (the body's `max_tokens`); fewer is an error. */
  events: number;
}

export interface StreamsMark {
  /** Seconds since the first stream was opened. */
  t: number;
  /** Streams whose answer has begun and not ended. */
  open: number;
  events: number;
  done: number;
  errors: number;
}

export interface StreamsResult {
  streams: number;
  /** Streams that ended with every event. */
  done: number;
  events: number;
  errors: number;
  /** Why streams failed, with how many each. */
  failures: Record<string, number>;
  /** Seconds from the first stream opened until all were open (NaN if some never opened). */
  allOpenS: number;
  durationS: number;
  /** Upstream write → client arrival, µs. */
  delayUs: Latency;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as StreamsSpec;
// One socket per stream, as thousands of separate clients would have.
const agent = new Agent({ keepAlive: false });
const url = new URL(spec.url);
const body = Buffer.from(spec.body);
const headers = { ...spec.headers, 'content-length': String(body.length) };
const delays = new Samples();
const failures: Record<string, number> = {};
let open = 0;
let opened = 0;
let events = 0;
let done = 0;
let errors = 0;
let allOpenAt = NaN;
const start = process.hrtime.bigint();
const since = () => Number(process.hrtime.bigint() - start) / 1e9;

function fail(reason: string): void {
  errors++;
  failures[reason] = (failures[reason] ?? 0) + 1;
}

function oneStream(): Promise<void> {
  return new Promise((resolve) => {
    let counted = false;
    let began = false;
    const finish = (reason: string | undefined) => {
      if (counted) return;
      counted = true;
      if (began) open--;
      if (reason) fail(reason);
      else done++;
      resolve();
    };
    const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', headers }, (res) => {
      began = true;
      open++;
      if (++opened === spec.streams) allOpenAt = since();
      const reader = new TickReader();
      let got = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = process.hrtime.bigint();
        for (const stamp of reader.read(chunk)) {
          delays.push(Number(now - stamp) / 1000);
          got++;
          events++;
        }
      });
      res.on('end', () =>
        finish(res.statusCode !== 200 ? `HTTP ${res.statusCode}` : got < spec.events ? `ended after ${got} of ${spec.events} events` : undefined),
      );
      res.on('error', (err) => finish(`response: ${err.message}`));
    });
    req.on('error', (err) => finish(`request: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    req.end(body);
  });
}

const mark = setInterval(() => {
  const m: StreamsMark = { t: since(), open, events, done, errors };
  process.stdout.write(`BENCH_MARK ${JSON.stringify(m)}\n`);
}, 1000);

const all: Promise<void>[] = [];
const gapMs = (spec.rampS * 1000) / spec.streams;
for (let i = 0; i < spec.streams; i++) {
  all.push(oneStream());
  // Spread the opening evenly: wait whenever the schedule is ahead of the clock.
  const due = (i + 1) * gapMs;
  const ahead = due - since() * 1000;
  if (ahead >= 1) await new Promise((resolve) => setTimeout(resolve, ahead));
}
await Promise.all(all);
clearInterval(mark);
const result: StreamsResult = {
  streams: spec.streams,
  done,
  events,
  errors,
  failures,
  allOpenS: allOpenAt,
  durationS: since(),
  delayUs: latencyOf(delays.values()),
};
process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
agent.destroy();
