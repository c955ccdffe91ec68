import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../../shared/process.js';

/**
 * PGlite is single-process: two processes opening one DATA_DIR corrupt it.
 * Whoever opens the embedded store holds this lock file; a running service
 * also writes where it listens and a local secret, so the CLI can ask it to
 * do the work instead of opening the store behind its back.
 */
export interface LockInfo {
  pid: number;
  /** Set by a running control plane: where the CLI may reach it. */
  url?: string;
  /** Authenticates the CLI to the running service (file is mode 0600). */
  secret?: string;
}

export function lockPath(dataDir: string): string {
  return join(dataDir, 'tollgate.lock');
}

/** The live holder of the lock, if any; a lock left by a dead process is ignored. */
export function readLock(dataDir: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockInfo;
    return info.pid !== process.pid && isAlive(info.pid) ? info : undefined;
  } catch {
    return undefined;
  }
}

export class DataDirBusyError extends Error {
  constructor(
    readonly holder: LockInfo,
    dataDir: string,
  ) {
    super(`The embedded store in ${dataDir} is in use by process ${holder.pid}.`);
  }
}

/** Takes the lock or throws DataDirBusyError; returns the release function. */
export function acquireLock(dataDir: string, info: Omit<LockInfo, 'pid'> = {}): { update(info: Omit<LockInfo, 'pid'>): void; release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify({ pid: process.pid, ...info }));
      closeSync(fd);
      return {
        update(next) {
          writeFileSync(path, JSON.stringify({ pid: process.pid, ...next }), { mode: 0o600 });
        },
        release() {
          rmSync(path, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readLock(dataDir);
      if (holder) throw new DataDirBusyError(holder, dataDir);
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`Could not take the lock ${path}.`);
}
