import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const REPO_ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');

/** Which cores each role runs on; `undefined` when the OS cannot pin (no taskset, one core). */
export interface Placement {
  /** The system under test: alone, so its CPU time and throughput are its own. */
  sut: string | undefined;
  /** Load generator, fake upstream, control plane when split out: shared by every system alike. */
  driver: string | undefined;
  note: string;
}

export function choosePlacement(): Placement {
  const cores = cpus().length;
  const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
  if (!hasTaskset || cores < 2) {
    return { sut: undefined, driver: undefined, note: `not pinned (${hasTaskset ? `${cores} core` : 'no taskset'})` };
  }
  const last = cores - 1;
  return {
    sut: '0',
    driver: last === 1 ? '1' : `1-${last}`,
    note: `system under test on core 0; load generator, fake upstream and control plane on core${last === 1 ? '' : 's'} ${last === 1 ? '1' : `1-${last}`}`,
  };
}

export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  /** Everything it printed so far (stdout + stderr), for error messages. */
  output(): string;
  stop(): Promise<void>;
  /** The cores the kernel lets it run on, read back from /proc once it was ready. */
  cpusAllowed: string;
}

export function cpusAllowed(pid: number): string {
  try {
    return /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
  } catch {
    return '?';
  }
}

export interface StartOptions {
  cpus: string | undefined;
  /** Working directory (another checkout's `npm start`); this one's by default. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Resolves true once the process is ready to serve. */
  ready: (proc: Proc) => Promise<boolean>;
  timeoutMs?: number;
}

/** `node --import tsx <file>`: one process (the `tsx` CLI forks a second one, which would hide the CPU we read). */
export function nodeArgs(file: string, args: string[] = []): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', file, ...args]];
}

/**
 * `node dist/<entry>.js`: Tollgate's own entry points run compiled, as `npm
 * start` runs them (`ensureBuilt` first), so no loader sits on the hot path.
 */
export function compiledArgs(entry: string, args: string[] = []): [string, string[]] {
  return [process.execPath, [join(REPO_ROOT, 'dist', entry.replace(/\.ts$/, '.js')), ...args]];
}

/** Builds dist/ when a source is newer than it (what `npm start`'s prestart does). */
export function ensureBuilt(): void {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bin/build.ts'), '--if-stale'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

export async function startProcess(name: string, command: string, args: string[], options: StartOptions): Promise<Proc> {
  const [cmd, argv] = options.cpus === undefined ? [command, args] : ['taskset', ['-c', options.cpus, command, ...args]];
  const child = spawn(cmd, argv, {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const proc: Proc = {
    name,
    pid: child.pid ?? -1,
    child,
    output: () => out,
    cpusAllowed: '?',
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${name} exited during start-up:\n${out.slice(-4000)}`);
    if (await options.ready(proc).catch(() => false)) {
      proc.cpusAllowed = cpusAllowed(proc.pid);
      return proc;
    }
    await sleep(100);
  }
  await proc.stop();
  throw new Error(`${name} was not ready within ${(options.timeoutMs ?? 60_000) / 1000}s:\n${out.slice(-4000)}`);
}

export function readyWhenPrinted(pattern: RegExp): (proc: Proc) => Promise<boolean> {
  return async (proc) => pattern.test(proc.output());
}

export function readyWhenHealthy(...urls: string[]): () => Promise<boolean> {
  return async () => {
    for (const url of urls) {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (!res.ok) return false;
    }
    return true;
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const CLOCK_TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** utime + stime of the whole process (all threads), in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  return (statCpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

/** utime + stime (fields 14 and 15) of a /proc/<pid>/stat line, in clock ticks. */
export function statCpuTicks(stat: string): number {
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`unreadable /proc stat line: ${stat.slice(0, 80)}`);
  return utime + stime;
}

export const CPU_RESOLUTION_US = 1_000_000 / CLOCK_TICKS_PER_SECOND;

/**
 * The process and all its descendants, from /proc/<pid>/task/<tid>/children,
 * or, on kernels built without those files, from every process's parent in
 * /proc/<pid>/stat.
 */
export function processTree(pid: number): number[] {
  const childrenOf = readdirSafe(`/proc/${pid}/task`).some((tid) => exists(`/proc/${pid}/task/${tid}/children`)) ? childrenFiles : childrenByParent();
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childrenOf(out[i]!));
  return out;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function exists(file: string): boolean {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

function childrenFiles(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSafe(`/proc/${pid}/task`)) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim()) out.push(Number(c));
    } catch {
      /* the task ended meanwhile */
    }
  }
  return out;
}

/** Children by parent pid, read once from every /proc/<pid>/stat (field 4, after the command name's last ')'). */
function childrenByParent(): (pid: number) => number[] {
  const byParent = new Map<number, number[]>();
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* ended meanwhile */
    }
  }
  return (pid) => byParent.get(pid) ?? [];
}

/** A per-process figure summed over a process tree (processes that end meanwhile count nothing). */
function overTree(pid: number, read: (pid: number) => number): number {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      total += read(p);
    } catch {
      /* exited meanwhile */
    }
  }
  return total;
}

/** utime + stime of a process tree (e.g. `npm start` and the service it runs), in microseconds. */
export const treeCpuMicros = (pid: number): number => overTree(pid, cpuMicros);

/** RSS of a process tree, in bytes. */
export const treeRssBytes = (pid: number): number => overTree(pid, rssBytes);

/**
 * Proportional set size of a process tree, in bytes: each page shared by
 * several processes counts for its share in each, so the tree's sum counts
 * it once. `npm start`'s three node processes (npm, the proxy, the control
 * plane) share the node executable's ~50 MiB of code, which a sum of RSS
 * counts three times though the machine holds it once.
 */
export const treePssBytes = (pid: number): number => overTree(pid, pssBytes);

/** Proportional set size in bytes, from /proc/<pid>/smaps_rollup. */
export function pssBytes(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const match = /^Pss:\s+(\d+) kB/m.exec(rollup);
  return match ? Number(match[1]) * 1024 : 0;
}

/** Resident set size in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/** Measures CPU time several processes spend during `work`. */
export async function withCpu<T>(
  pids: Record<string, number>,
  work: () => Promise<T>,
  /** Roles whose CPU is their whole process tree's (`npm start`). */
  trees: ReadonlySet<string> = new Set(),
): Promise<{ result: T; cpuUs: Record<string, number>; wallUs: number }> {
  const read = (k: string, pid: number) => (trees.has(k) ? treeCpuMicros(pid) : cpuMicros(pid));
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, read(k, pid)]));
  const t0 = process.hrtime.bigint();
  const result = await work();
  const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
  const cpuUs = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, read(k, pid) - before[k]!]));
  return { result, cpuUs, wallUs };
}

/**
 * Waits until a process uses under `share` of a core over half a second (or `maxMs` passes).
 * Returns how long that took, in seconds. Used so work one run queued up (e.g. usage
 * reports the control plane is still absorbing) does not spill into the next run.
 */
export async function waitUntilIdle(pid: number, maxMs = 10_000, share = 0.1, read: (pid: number) => number = cpuMicros): Promise<number> {
  const t0 = Date.now();
  const windowMs = 500;
  while (Date.now() - t0 < maxMs) {
    const before = read(pid);
    await sleep(windowMs);
    if (read(pid) - before <= share * windowMs * 1000) break;
  }
  return (Date.now() - t0) / 1000;
}
