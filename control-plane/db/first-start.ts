import type { Logger } from '../../shared/logger.js';
import { acquireLock } from './data-dir-lock.js';
import { ensurePrivateDataDir, tightenDataDir } from './data-dir-mode.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite.js';

/**
 * Creates and migrates the embedded store, then closes it. PGlite's initdb
 * leaves ~300 MiB of WebAssembly memory behind in the process that ran it,
 * which a closed store does not give back; `npm start` runs this in a
 * process of its own on a fresh DATA_DIR, so the one that serves starts
 * from a store that exists.
 */
export async function createEmbeddedStore(dataDir: string, logger: Logger): Promise<void> {
  ensurePrivateDataDir(dataDir, logger);
  const lock = acquireLock(dataDir);
  try {
    const db = await openPglite(dataDir);
    try {
      const applied = await migrate(db);
      if (applied.length) logger.info({ applied }, 'migrations applied');
    } finally {
      await db.close();
    }
    tightenDataDir(dataDir);
  } finally {
    lock.release();
  }
}
