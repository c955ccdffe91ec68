import { ConfigError, loadConfig, redactUrl, type Config, type ConfigMode } from '../shared/config.js';
import { loadDotEnv } from '../shared/dotenv.js';
import { restrictUmask } from '../control-plane/db/data-dir-mode.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { createMetricsRegistry, startMetricsServer, type MetricsServer, type Registry } from '../shared/metrics.js';
import { DataDirBusyError } from '../control-plane/db/data-dir-lock.js';

export interface Running {
  /** Stops taking connections and lets work in flight finish for up to `graceMs`. */
  close(graceMs: number): Promise<void>;
  /** Metrics text of another process of the service (`npm start`'s control plane), served with this one's. */
  moreMetrics?: () => Promise<string>;
}

/** The metrics listener; a default port already taken only costs the listener, an explicit one is fatal. */
async function serveMetrics(config: Config, logger: Logger, registry: Registry, more: Running['moreMetrics']): Promise<MetricsServer | undefined> {
  const { metricsHost: host, metricsPort: port, metricsToken: token } = config.ops;
  try {
    const server = await startMetricsServer(registry, { host, port, token }, more);
    logger.info({ host, port: server.port }, 'metrics listening');
    return server;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || config.ops.metricsPortSet) throw err;
    logger.warn({ host, port }, 'metrics port in use: /metrics is not served (set METRICS_PORT)');
    return undefined;
  }
}

/** Names the setting that chose a port already taken, so the fix is one variable away. */
export function portInUse(config: Config, err: { port?: number; address?: string }): string {
  const owner =
    err.port === config.controlPlanePort
      ? 'CONTROL_PLANE_PORT'
      : err.port === config.proxyPort
        ? 'PROXY_PORT'
        : err.port === config.ops.metricsPort
          ? 'METRICS_PORT'
          : undefined;
  const where = `${err.address ?? config.host}:${err.port ?? '?'}`;
  return owner
    ? `port ${err.port} is already in use (${where}); stop what holds it or choose another with ${owner}.`
    : `a port is already in use (${where}); CONTROL_PLANE_PORT, PROXY_PORT and METRICS_PORT choose them.`;
}

/**
 * Shared start-up for the entry points: config once, clear failure, the
 * metrics listener, and shutdown. The first SIGTERM/SIGINT drains (the
 * listener stops, requests and streams in flight get SHUTDOWN_GRACE_SECONDS,
 * usage is settled) and exits 0; a second one exits at once.
 */
export async function run(
  mode: ConfigMode,
  start: (config: Config, logger: Logger, registry: Registry | undefined) => Promise<Running>,
): Promise<void> {
  // Before anything is written: the embedded store, secrets.key and the proxy's outbox are this account's only.
  restrictUmask();
  let config: Config;
  try {
    loadDotEnv(process.env);
    config = loadConfig(process.env, mode);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, `tollgate-${mode}`);
  let running: Running;
  let metricsServer: MetricsServer | undefined;
  try {
    const registry = config.ops.metricsEnabled ? createMetricsRegistry() : undefined;
    running = await start(config, logger, registry);
    if (registry) metricsServer = await serveMetrics(config, logger, registry, running.moreMetrics);
  } catch (err) {
    if (err instanceof DataDirBusyError) {
      process.stderr.write(`${err.message} Stop it first, or set DATA_DIR to another directory.\n`);
    } else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`Tollgate failed to start: ${portInUse(config, err as NodeJS.ErrnoException & { port?: number })}\n`);
    } else {
      const where = config.databaseUrl ? ` (DATABASE_URL=${redactUrl(config.databaseUrl)})` : '';
      process.stderr.write(`Tollgate failed to start${where}: ${(err as Error).message}\n`);
    }
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    // close() stops the listener before its first await, so once this line is out new connections are refused.
    const closed = running.close(config.ops.shutdownGraceMs);
    logger.info({ signal, graceMs: config.ops.shutdownGraceMs }, 'shutting down: draining requests in flight');
    closed
      .then(() => metricsServer?.close())
      .then(
        () => {
          logger.info('shut down cleanly');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
