import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../shared/logger.js';

/**
 * The embedded store's directory holds every tenant's users, key and session
 * hashes, and balances: only the server's own account may read or write it.
 * Created 0700; an existing one open to others is tightened, with a warning.
 * Files made earlier under a looser umask keep their modes: the directory's
 * 0700 is what keeps other accounts away from them.
 */
export function ensurePrivateDataDir(dataDir: string, logger: Logger): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const mode = statSync(dataDir).mode & 0o777;
  if (mode & 0o077) {
    chmodSync(dataDir, 0o700);
    logger.warn({ dataDir, was: `0${mode.toString(8)}` }, 'DATA_DIR was open to other accounts; set to 0700');
  }
}

/**
 * Files this process creates are its own only (0600, directories 0700):
 * PGlite asks for 0666 table files and leaves the rest to the umask. Set by
 * the server entry points (bin/run.ts), never by a library function.
 */
export function restrictUmask(): void {
  process.umask(0o077);
}

/**
 * PGlite sets its table files' mode itself (0666), past the umask: once the
 * store is open and again when it closes, everything in DATA_DIR open to
 * other accounts is set to 0600 (directories 0700). Files it makes in
 * between are still behind the directory's 0700.
 */
export function tightenDataDir(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const mode = statSync(full).mode & 0o777;
    if (mode & 0o077) chmodSync(full, entry.isDirectory() ? 0o700 : 0o600);
    if (entry.isDirectory()) tightenDataDir(full);
  }
}
