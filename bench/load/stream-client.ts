/**
 * Streaming load child: `connections` loops, each sending the same streamed
 * request back to back over a keep-alive socket for `durationS`. Records time
 * to first body byte (the first SSE event) and total time per stream, and
 * counts SSE events (frames ending in a blank line).
 */
import { Agent, request } from 'node:http';
import type { Latency } from '../lib/load.js';
import { latencyOf, Samples } from '../lib/stats.js';

export interface StreamSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationS: number;
}

export interface StreamResult {
  streams: number;
  events: number;
  errors: number;
  durationS: number;
  /** Microseconds. */
  ttfbUs: Latency;
  totalUs: Latency;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as StreamSpec;
const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
const url = new URL(spec.url);
const body = Buffer.from(spec.body);
const headers = { ...spec.headers, 'content-length': String(body.length) };
const ttfb = new Samples();
const total = new Samples();
let events = 0;
let errors = 0;
const start = process.hrtime.bigint();
const endAt = start + BigInt(spec.durationS * 1e9);

function oneStream(): Promise<void> {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    let first = 0n;
    let frames = 0;
    let lastByte = 0;
    const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', headers }, (res) => {
      res.on('data', (chunk: Buffer) => {
        if (first === 0n) first = process.hrtime.bigint();
        // A frame ends with "\n\n"; the pair may straddle two chunks.
        if (lastByte === 10 && chunk[0] === 10) frames++;
        for (let i = chunk.indexOf(10); i !== -1 && i < chunk.length - 1; i = chunk.indexOf(10, i + 1)) {
          if (chunk[i + 1] === 10) frames++;
        }
        lastByte = chunk[chunk.length - 1]!;
      });
      res.on('end', () => {
        if (res.statusCode !== 200 || first === 0n) errors++;
        else {
          ttfb.push(Number(first - t0) / 1000);
          total.push(Number(process.hrtime.bigint() - t0) / 1000);
          events += frames;
        }
        resolve();
      });
      res.on('error', () => {
        errors++;
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(body);
  });
}

async function loop(): Promise<void> {
  while (process.hrtime.bigint() < endAt) await oneStream();
}

await Promise.all(Array.from({ length: spec.connections }, loop));
const durationS = Number(process.hrtime.bigint() - start) / 1e9;
const result: StreamResult = {
  streams: total.length,
  events,
  errors,
  durationS,
  ttfbUs: latencyOf(ttfb.values()),
  totalUs: latencyOf(total.values()),
};
process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
agent.destroy();
