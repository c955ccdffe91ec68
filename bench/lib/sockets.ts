/** The machine's socket limits the `streams` scenario runs into: open files per process, accept queues. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Connections the kernel dropped because a listener's accept queue was full,
 * machine-wide, from /proc/net/netstat (`TcpExt: ListenOverflows`). A stream
 * refused that way fails as a reset or a connect timeout, which is the
 * server not accepting fast enough, not the server failing the stream.
 */
export function listenOverflows(netstat: string): number {
  const lines = netstat.split('\n').filter((l) => l.startsWith('TcpExt:'));
  const names = lines[0]?.split(/\s+/) ?? [];
  const values = lines[1]?.split(/\s+/) ?? [];
  const at = names.indexOf('ListenOverflows');
  return at === -1 ? NaN : Number(values[at]);
}

export const readOverflows = (): number => {
  try {
    return listenOverflows(readFileSync('/proc/net/netstat', 'utf8'));
  } catch {
    return NaN;
  }
};

/** The soft open-files limit of a process, raised towards `need` (up to its hard limit) with prlimit when lower. */
export function ensureOpenFiles(pid: number, need: number): number {
  const read = () => {
    const m = /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    const n = (v: string | undefined) => (v === undefined ? 1024 : v === 'unlimited' ? Infinity : Number(v));
    return { soft: n(m?.[1]), hard: n(m?.[2]) };
  };
  const { soft, hard } = read();
  if (soft >= need) return soft;
  const to = Math.min(need, hard);
  spawnSync('prlimit', ['--pid', String(pid), `--nofile=${to}:${hard === Infinity ? 'unlimited' : hard}`]);
  return read().soft;
}
