import { randomBytes } from 'node:crypto';
import { ensurePrivateDataDir, tightenDataDir } from './db/data-dir-mode.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { createMetricsRegistry, type Registry } from '../shared/metrics.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { createControlPlane } from './app.js';
import { openDatabase, type Database } from './db/database.js';
import { acquireLock } from './db/data-dir-lock.js';
import { migrate } from './db/migrate.js';
import { createControlPlaneMetrics, instrumentDatabase } from './metrics.js';
import { targetPolicy } from './services/alerts/outbound-policy.js';
import { startAlertDelivery } from './services/alerts/delivery.js';
import { guardedWebhookSend } from './services/alerts/webhook-send.js';
import { createSecretSealer } from './services/sso/secrets.js';
import { staleGrantWarnings } from './services/workspaces/teams.js';

export interface RunningControlPlane {
  server: Server;
  db: Database;
  /** Where this process can reach it (loopback). */
  url: string;
  /** Where its metrics are registered (undefined with METRICS_ENABLED=false). */
  metrics: Registry | undefined;
  /** Stops taking connections; requests in flight get `graceMs` (default SHUTDOWN_GRACE_SECONDS) to finish. */
  close(graceMs?: number): Promise<void>;
}

/** Opens the store (taking the DATA_DIR lock for PGlite), migrates, and listens. */
export async function startControlPlane(
  config: Config,
  logger: Logger,
  options: { port?: number; host?: string; clock?: Clock; registry?: Registry } = {},
): Promise<RunningControlPlane> {
  const embedded = !config.databaseUrl;
  if (embedded) ensurePrivateDataDir(config.dataDir, logger);
  const lock = embedded ? acquireLock(config.dataDir) : undefined;
  let db: Database | undefined;
  try {
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const applied = await migrate(db);
    if (embedded) tightenDataDir(config.dataDir);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    for (const line of await staleGrantWarnings(db, config.models)) process.stderr.write(`${line}\n`);
    const localSecret = embedded ? randomBytes(32).toString('base64url') : undefined;
    const registry = config.ops.metricsEnabled ? (options.registry ?? createMetricsRegistry()) : undefined;
    const raw = db;
    const metrics = registry ? createControlPlaneMetrics(registry, () => raw) : undefined;
    if (metrics) db = instrumentDatabase(db, metrics);
    let closing = false;
    const controlPlane = createControlPlane(
      { db, config, clock: options.clock ?? systemClock, logger },
      { localSecret, metrics, closing: () => closing },
    );
    const server = await controlPlane.listen(options.port ?? config.controlPlanePort, options.host ?? config.host);
    // Alerts go out from their own loop: settlement only writes the outbox rows.
    const alerts = startAlertDelivery(
      { db, config, clock: options.clock ?? systemClock, logger },
      createSecretSealer(config),
      guardedWebhookSend(targetPolicy(config), config.alerts.timeoutMs),
    );
    const { port } = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    lock?.update({ url, secret: localSecret });
    const openDb = db;
    return {
      server,
      db: openDb,
      url,
      metrics: registry,
      async close(graceMs = config.ops.shutdownGraceMs) {
        closing = true;
        await alerts.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // A client that keeps its connection busy (a proxy's polls, key lookups and usage reports) would
          // hold the close until the grace period ends, since the connection is never idle: every answer
          // from now on closes its connection, so each client moves to another replica after its request.
          server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => res.setHeader('connection', 'close'));
          // Proxies hold change streams open for good: those end now (the
          // proxies reconnect), idle sockets go now, and only requests in
          // flight get the grace period.
          controlPlane.endChangeStreams();
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), graceMs).unref();
        });
        await openDb.close();
        if (embedded) tightenDataDir(config.dataDir);
        lock?.release();
      },
    };
  } catch (err) {
    await db?.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
}
