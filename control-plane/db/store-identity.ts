import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

export interface StoreIdentity {
  kind: 'embedded' | 'postgres';
  /** Equal for two processes exactly when they use the same store; reveals nothing about it. */
  fingerprint: string;
  /** How to name it to a person: the data directory, or the database host and name (never a password). */
  where: string;
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir); // not created yet
  }
}

/**
 * Which store a process with these settings uses. The CLI compares its own
 * with a running service's before writing, so it never creates an org in a
 * store the service does not read.
 */
export function storeIdentity(settings: { databaseUrl: string | undefined; dataDir: string }): StoreIdentity {
  if (!settings.databaseUrl) {
    const dir = realDir(settings.dataDir);
    return { kind: 'embedded', fingerprint: fingerprintOf(`embedded:${dir}`), where: `the embedded store in ${dir}` };
  }
  const u = new URL(settings.databaseUrl);
  const host = ['localhost', '::1', '[::1]'].includes(u.hostname) ? '127.0.0.1' : u.hostname.toLowerCase();
  const port = u.port || '5432';
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
  return {
    kind: 'postgres',
    fingerprint: fingerprintOf(`postgres:${host}:${port}/${database}`),
    where: `PostgreSQL database "${database}" on ${host}:${port}`,
  };
}

function fingerprintOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
