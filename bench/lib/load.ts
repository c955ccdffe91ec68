import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeArgs, REPO_ROOT } from './procs.js';

/** One fixed request fired over `connections` keep-alive connections for `durationS`. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationS: number;
}

export interface Latency {
  p50: number;
  p99: number;
  p999: number;
  mean: number;
  max: number;
}

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  requests: number;
  /** Requests that failed: socket errors, timeouts and non-2xx answers. */
  errors: number;
  non2xx: number;
  durationS: number;
  rps: number;
  /** Microseconds. */
  latencyUs: Latency;
}

export type LoadTool = 'wrk' | 'autocannon';

export function pickLoadTool(wanted: LoadTool | undefined): LoadTool {
  const hasWrk = spawnSync('wrk', ['--version']).error === undefined;
  if (wanted === 'wrk' && !hasWrk) throw new Error('--tool wrk: wrk is not installed (apt-get install wrk)');
  return wanted ?? (hasWrk ? 'wrk' : 'autocannon');
}

/**
 * Runs a child process (pinned), collects stdout, and parses the line starting with `marker`;
 * `onLine` sees each stdout line as it comes (progress the parent measures against).
 */
export function runChild(
  command: string,
  args: string[],
  cpus: string | undefined,
  marker: string,
  timeoutMs: number,
  onLine?: (line: string) => void,
): Promise<string> {
  const [cmd, argv] = cpus === undefined ? [command, args] : ['taskset', ['-c', cpus, command, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let seen = 0;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (!onLine) return;
      for (let nl = out.indexOf('\n', seen); nl !== -1; nl = out.indexOf('\n', seen)) {
        onLine(out.slice(seen, nl));
        seen = nl + 1;
      }
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith(marker));
      if (line) resolve(line.slice(marker.length).trim());
      else reject(new Error(`${command} ${args.join(' ')} exited ${code} without a result:\n${(out + err).slice(-3000)}`));
    });
  });
}

/** A Lua long-bracket string literal whose closing bracket cannot occur in `s`. */
export function luaString(s: string): string {
  let eq = '=';
  while (s.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${s}]${eq}]`;
}

/** wrk's Lua hooks: the request, and a JSON line with the µs percentiles wrk's own report does not print. */
export function wrkScript(spec: LoadSpec): string {
  const headers = Object.entries(spec.headers)
    .map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`)
    .join('\n');
  return `wrk.method = ${luaString(spec.method)}
${spec.body !== undefined ? `wrk.body = ${luaString(spec.body)}` : ''}
${headers}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%f,"p99":%f,"p999":%f,"mean":%f,"max":%f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.mean, latency.max))
end
`;
}

interface WrkJson {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p99: number;
  p999: number;
  mean: number;
  max: number;
}

async function runWrk(spec: LoadSpec, cpus: string | undefined): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-wrk-'));
  const script = join(dir, 'request.lua');
  writeFileSync(script, wrkScript(spec));
  try {
    const raw = await runChild(
      'wrk',
      ['-t', '1', '-c', String(spec.connections), '-d', `${spec.durationS}s`, '--timeout', '10s', '-s', script, spec.url],
      cpus,
      'BENCH_RESULT',
      (spec.durationS + 30) * 1000,
    );
    const r = JSON.parse(raw) as WrkJson;
    const durationS = r.duration_us / 1e6;
    const errors = r.connect + r.read + r.write + r.status + r.timeout;
    return {
      tool: 'wrk',
      requests: r.requests,
      errors,
      non2xx: r.status,
      durationS,
      rps: (r.requests - errors) / durationS,
      latencyUs: { p50: r.p50, p99: r.p99, p999: r.p999, mean: r.mean, max: r.max },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(spec: LoadSpec, cpus: string | undefined): Promise<LoadResult> {
  const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/load/autocannon-child.ts'), [JSON.stringify(spec)]);
  const raw = await runChild(node, args, cpus, 'BENCH_RESULT', (spec.durationS + 30) * 1000);
  return JSON.parse(raw) as LoadResult;
}

export function runLoad(tool: LoadTool, spec: LoadSpec, cpus: string | undefined): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(spec, cpus) : runAutocannon(spec, cpus);
}
