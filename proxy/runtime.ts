import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import type { NowMs } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { createMetricsRegistry, type Registry } from '../shared/metrics.js';
import { createTracing } from '../shared/tracing.js';
import { startChangeFeed } from './change-feed.js';
import { createControlPlaneClient } from './control-plane-client.js';
import { createEdgeHandler } from './edge.js';
import { createMemoryHoldStore, type HoldStore } from './holds.js';
import { createRedisHoldStore } from './holds-redis.js';
import { createKeyCache } from './key-cache.js';
import { createMetering, type Metering } from './metering.js';
import { countHolds, createProxyMetrics, type ProxyGaugeSources } from './metrics.js';
import { createEdgeObserver } from './observe.js';
import { createSettlementWatch } from './settlement-watch.js';
import { createRateLimits } from './rate-limits.js';
import { errorBody } from './wire-errors.js';

export interface RunningProxy {
  server: Server;
  url: string;
  /** Where this proxy's metrics are registered (undefined with METRICS_ENABLED=false). */
  metrics: Registry | undefined;
  /** Resolves once every usage report in flight has been taken (tests, shutdown). */
  drain(): Promise<void>;
  /**
   * Stops taking connections, lets calls in flight finish for up to
   * `graceMs` (default 10 s; streams longer than that are cut and billed for
   * what they used), settles their usage, then releases everything.
   */
  close(graceMs?: number): Promise<void>;
}

export interface ProxyOptions {
  port?: number;
  host?: string;
  controlPlaneUrl: string;
  /** Subscribe to the control plane's push stream (default true); tests turn it off to prove the poll alone suffices. */
  changePush?: boolean;
  /** The process's metrics registry (bin/ serves it); one of its own is made when metrics are on and none is given. */
  registry?: Registry;
  /** The proxy's one clock (default Date.now); every part that reads the time gets this one. */
  now?: NowMs;
}

/** What /readyz answers: ready, and each check by name. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, boolean>;
}

/** Builds the data plane and listens; everything it holds is released by close(). */
export async function startProxy(config: Config, logger: Logger, options: ProxyOptions): Promise<RunningProxy> {
  const settings = config.proxy;
  const registry = config.ops.metricsEnabled ? (options.registry ?? createMetricsRegistry()) : undefined;
  const gauges: ProxyGaugeSources = {};
  const metrics = registry ? createProxyMetrics(registry, gauges) : undefined;
  const settlements = createSettlementWatch(metrics);
  const cp = settlements.wrap(createControlPlaneClient(options.controlPlaneUrl, config.dataPlaneToken));
  const now = options.now ?? Date.now;
  const keys = createKeyCache(cp, settings, logger, now);

  let redis: Redis | undefined;
  if (config.redisUrl) {
    // No offline queue: while Redis is down a command fails at once, and the
    // caller applies the outage policy instead of waiting.
    redis = new Redis(config.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));
    await redis.connect();
  }
  const ttlMs = settings.holdTtlSeconds * 1000;
  const store: HoldStore = redis ? createRedisHoldStore(redis, settings.redisPrefix, ttlMs, now) : createMemoryHoldStore(ttlMs, now);
  const holds = metrics ? countHolds(store, metrics) : store;
  const limits = createRateLimits(redis, settings.redisPrefix);
  const metering: Metering = createMetering(cp, holds, limits, logger);

  const pools = new Map<string, Pool>();
  const pool = (origin: string): Pool => {
    let p = pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connect: { timeout: settings.upstreamConnectTimeoutMs },
        headersTimeout: settings.upstreamHeadersTimeoutMs,
        bodyTimeout: settings.upstreamIdleTimeoutMs,
        keepAliveTimeout: 30_000,
      });
      pools.set(origin, p);
    }
    return p;
  };

  const tracing = createTracing(config.ops.tracesEndpoint, config.ops.serviceName ?? 'tollgate-proxy');
  const observe = createEdgeObserver({
    metrics,
    accessLog: config.ops.accessLog ? logger.child({ access: true }) : undefined,
    tracing,
    settlements,
  });
  gauges.keyCacheSize = () => keys.size();
  gauges.keyStats = () => keys.stats;
  gauges.settlementDepth = () => settlements.depth();
  gauges.redisUp = () => redis?.status === 'ready';

  let closing = false;
  const readiness = (): Readiness => {
    const checks: Record<string, boolean> = {
      accepting: !closing,
      models: config.models.models.size > 0,
      controlPlane: settlements.controlPlaneReachable(),
      keyCacheWarm: keys.size() > 0,
    };
    if (redis) checks.redis = redis.status === 'ready';
    // A warm cache keeps serving known keys through a control-plane outage.
    const ready = checks.accepting! && checks.models! && (checks.controlPlane! || checks.keyCacheWarm!) && checks.redis !== false;
    return { ready, checks };
  };

  const edge = createEdgeHandler({ config, logger, keys, limits, holds, metering, pool, now, observe });
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/readyz') {
      const r = readiness();
      const body = JSON.stringify({ status: r.ready ? 'ready' : 'not ready', checks: r.checks });
      res.writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    edge(req, res);
  };
  const server = createServer({ keepAliveTimeout: 65_000 }, handle);
  // Requests Node's parser refuses (e.g. Content-Length with Transfer-Encoding) still get a JSON 400 with an id.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    const body = errorBody('chat', 'invalid_input', 'The request is not valid HTTP/1.1.');
    socket.end(
      `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: req_${randomUUID().replace(/-/g, '')}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  const feed = startChangeFeed(cp, keys, logger, settings.versionPollMs, options.changePush ?? true, (via, at) => {
    metrics?.invalidations.labels(via).inc();
    if (at !== undefined) metrics?.invalidationLag.labels(via).observe(Math.max(0, Date.now() - at) / 1000);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.proxyPort, options.host ?? config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    metrics: registry,
    drain: () => metering.drain(),
    async close(graceMs = 10_000) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // A keep-alive connection whose call has just finished is idle now: let it go
      // at once rather than hold shutdown for the whole grace period.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const grace = setTimeout(() => server.closeAllConnections(), graceMs);
      grace.unref();
      await closed;
      clearInterval(sweep);
      clearTimeout(grace);
      feed.stop();
      await Promise.race([metering.drain(), new Promise((r) => setTimeout(r, 5_000).unref())]);
      await Promise.all([...pools.values()].map((p) => p.close()));
      await cp.close();
      await holds.close();
      redis?.disconnect();
      await observe.close();
    },
  };
}
