/**
 * Fixed-count load child: sends every request of a list once (each may carry
 * its own key or body) over `connections` keep-alive sockets, and reports
 * throughput and latency. Used where each request must differ: cold keys,
 * SCIM creates and SCIM filters.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { Latency } from '../lib/load.js';
import { latencyOf, Samples } from '../lib/stats.js';

export interface BatchRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface BatchSpec {
  origin: string;
  connections: number;
  /** A JSON file holding BatchRequest[] (too large for argv). */
  requestsFile: string;
}

export interface BatchResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  durationS: number;
  rps: number;
  /** Microseconds. */
  latencyUs: Latency;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as BatchSpec;
const list = JSON.parse(readFileSync(spec.requestsFile, 'utf8')) as BatchRequest[];
const origin = new URL(spec.origin);
const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
const latency = new Samples();
const statuses: Record<string, number> = {};
let errors = 0;
let next = 0;

function send(r: BatchRequest): Promise<void> {
  return new Promise((resolve) => {
    const body = r.body === undefined ? undefined : Buffer.from(r.body);
    const headers = body ? { ...r.headers, 'content-length': String(body.length) } : r.headers;
    const t0 = process.hrtime.bigint();
    const req = request({ agent, host: origin.hostname, port: origin.port, path: r.path, method: r.method, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        const status = String(res.statusCode);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if ((res.statusCode ?? 0) >= 300) errors++;
        else latency.push(Number(process.hrtime.bigint() - t0) / 1000);
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      statuses.socket = (statuses.socket ?? 0) + 1;
      resolve();
    });
    req.end(body);
  });
}

async function worker(): Promise<void> {
  while (next < list.length) await send(list[next++]!);
}

const start = process.hrtime.bigint();
await Promise.all(Array.from({ length: spec.connections }, worker));
const durationS = Number(process.hrtime.bigint() - start) / 1e9;
const result: BatchResult = {
  requests: list.length,
  errors,
  statuses,
  durationS,
  rps: (list.length - errors) / durationS,
  latencyUs: latencyOf(latency.values()),
};
process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
agent.destroy();
