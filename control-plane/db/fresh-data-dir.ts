import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether DATA_DIR holds no embedded store yet (PostgreSQL's data directory
 * marker is missing). A file of its own so `npm start`'s proxy process can
 * ask without loading PGlite and the migrations (first-start.ts), which only
 * the control plane's process runs.
 */
export function isFreshDataDir(dataDir: string): boolean {
  return !existsSync(join(dataDir, 'PG_VERSION'));
}
