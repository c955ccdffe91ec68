import type { Config } from '../../shared/config.js';
import { systemClock } from '../../shared/clock.js';
import { createLogger } from '../../shared/logger.js';
import { openDatabase } from '../../control-plane/db/database.js';
import { migrate } from '../../control-plane/db/migrate.js';
import { acquireLock, DataDirBusyError, readLock } from '../../control-plane/db/data-dir-lock.js';
import { storeIdentity, type StoreIdentity } from '../../control-plane/db/store-identity.js';
import type { ControlPlaneDeps } from '../../control-plane/deps.js';
import { LOCAL_SECRET_HEADER, LOCAL_STORE_PATH } from '../../control-plane/local-admin.js';
import { CliError } from './errors.js';

/** How a command does its work: through a running service (path under /v1/local) or on the store itself. */
export interface StoreWork<T> {
  servicePath: string;
  serviceBody: Record<string, unknown>;
  direct(deps: ControlPlaneDeps): Promise<T>;
}

function loopbackHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The store a service on this machine's CONTROL_PLANE_PORT says it uses, if one answers. */
async function runningServiceStore(config: Config): Promise<{ url: string; store: Pick<StoreIdentity, 'kind' | 'fingerprint'> } | undefined> {
  const url = `http://${loopbackHost(config.host)}:${config.controlPlanePort}`;
  try {
    const res = await fetch(`${url}${LOCAL_STORE_PATH}`, { signal: AbortSignal.timeout(2_000) });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { kind?: unknown; fingerprint?: unknown };
    if ((body.kind !== 'embedded' && body.kind !== 'postgres') || typeof body.fingerprint !== 'string') return undefined;
    return { url, store: { kind: body.kind, fingerprint: body.fingerprint } };
  } catch {
    return undefined; // nothing there, or not Tollgate
  }
}

async function throughService<T>(url: string, secret: string, work: StoreWork<T>): Promise<T> {
  const res = await fetch(`${url}${work.servicePath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [LOCAL_SECRET_HEADER]: secret },
    body: JSON.stringify(work.serviceBody),
  });
  const body = (await res.json()) as T & { detail?: string };
  if (!res.ok) throw new CliError(body.detail ?? `the service answered HTTP ${res.status}`);
  return body;
}

async function direct<T>(config: Config, work: StoreWork<T>): Promise<T> {
  const lock = config.databaseUrl ? undefined : acquireLock(config.dataDir);
  try {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await migrate(db);
      return await work.direct({ db, config, clock: systemClock, logger: createLogger('silent', 'cli') });
    } finally {
      await db.close();
    }
  } finally {
    lock?.release();
  }
}

/**
 * Runs `work` on the store the service uses, or refuses. The CLI reads the
 * same settings as the service (DATABASE_URL, DATA_DIR, CONTROL_PLANE_PORT);
 * a service holding the embedded store does the work itself (PGlite is
 * single-process), and a service found on the port that uses another store
 * than these settings name stops the CLI before it writes anything.
 */
export async function onServiceStore<T>(config: Config, work: StoreWork<T>): Promise<T> {
  const mine = storeIdentity(config);
  const holder = config.databaseUrl ? undefined : readLock(config.dataDir);
  if (holder?.url && holder.secret) return throughService(holder.url, holder.secret, work);
  const running = await runningServiceStore(config);
  if (running && running.store.fingerprint !== mine.fingerprint) {
    const theirs = running.store.kind === 'postgres' ? 'a PostgreSQL database (DATABASE_URL)' : 'an embedded store in another DATA_DIR';
    throw new CliError(
      `The Tollgate service at ${running.url} uses ${theirs}, but these settings point at ${mine.where}; nothing was written. ` +
        'Run this command with the DATABASE_URL and DATA_DIR the service was started with.',
    );
  }
  try {
    return await direct(config, work);
  } catch (err) {
    if (err instanceof DataDirBusyError) throw new CliError(`${err.message} Try again when it has finished.`);
    throw err;
  }
}
