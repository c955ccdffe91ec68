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
import { createEdgeHandler } from './edge/index.js';
import { createMemoryHoldStore, type HoldStore } from './money/holds.js';
import { createHoldKeepAlive } from './money/keep-alive.js';
import { openOutbox } from './money/outbox.js';
import { createRedisHoldStore } from './money/holds-redis.js';
import { createKeyCache } from './key-cache.js';
import { createMetering, type Metering } from './money/metering.js';
import { createProxyMetrics, type ProxyGaugeSources } from './metrics.js';
import { createEdgeObserver } from './observe.js';
import { createSettlementWatch } from './money/settlement-watch.js';
import { moneySnapshot } from './money/snapshot.js';
import { createRateLimits } from './rate-limits.js';

/** How long shutdown tries to hand queued usage to the control plane before leaving it in the outbox. */
const SETTLE_ON_CLOSE_MS = 5_000;

export interface RunningProxy {
  server: Server;
  url: string;
  /** Where this proxy's metrics are registered (undefined with METRICS_ENABLED=false). */
  metrics: Registry | undefined;
  /** Resolves once every usage report in flight has been taken (tests, shutdown). */
  drain(): Promise<void>;
  /**
   * Stops taking connections, lets calls in flight finish for up to
   * `graceMs` (default SHUTDOWN_GRACE_SECONDS; streams longer than that are cut and
   * billed for what they used), hands their usage to the control plane (or
   * leaves it in the outbox for the next start), then releases everything.
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
    // caller applies the outage policy instead of waiting. Reconnect attempts
    // stay well inside the hold fence, so a restarted Redis is noticed in time.
    const retryCap = Math.max(50, Math.floor(settings.holdFenceMs / 4));
    redis = new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => Math.min(times * 50, retryCap),
    });
    redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));
    await redis.connect();
  }
  const ttlMs = settings.holdTtlSeconds * 1000;
  // The outbox first: a second proxy on the same directory must fail before anything else starts.
  const outbox = openOutbox(settings.dataDir);
  // Every hold this proxy owes, kept alive in whichever store holds them (made below).
  const live = createHoldKeepAlive({ extend: (requestId, ids) => holds.extend(requestId, ids) }, Math.max(1_000, ttlMs / 3), logger);
  const redisHolds = redis
    ? createRedisHoldStore(redis, {
        prefix: settings.redisPrefix,
        ttlMs,
        fenceMs: settings.holdFenceMs,
        live: () => live.list(),
        authoritative: async (workspaceId, keyId) => {
          const m = await cp.keyMoney(keyId);
          if (!m) throw new Error(`key ${keyId} is unknown to the control plane`);
          return moneySnapshot(workspaceId, keyId, m);
        },
        logger,
        now,
      })
    : undefined;
  const holds: HoldStore = redisHolds ?? createMemoryHoldStore(ttlMs, now);
  // Every hold owed is in the keep-alive list, from admission until release or acknowledgement.
  gauges.holdsOutstanding = () => live.size();
  const limits = createRateLimits(redis, settings.redisPrefix);
  const metering: Metering = createMetering({
    cp,
    holds,
    limits,
    logger,
    outbox,
    live,
    retryMaxMs: settings.settleRetryMaxMs,
    maxPending: settings.outboxMaxRecords,
  });
  // Before listening: the epoch is joined, and what an earlier run left unsettled is held again,
  // so no admission sees money this proxy already spent.
  await redisHolds?.start();
  await metering.start();

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
    edge.handle(req, res);
  };
  const server = createServer({ keepAliveTimeout: 65_000 }, handle);
  // Requests Node's parser refuses (e.g. Content-Length with Transfer-Encoding) still get a JSON error with an id.
  server.on('clientError', edge.clientError);
  const feed = startChangeFeed(cp, keys, logger, settings.versionPollMs, options.changePush ?? true, {
    // The control plane answering again is the signal for settlement retries to go at once.
    onReachable: () => metering.wake(),
    onApplied: (via, at) => {
      metrics?.invalidations.labels(via).inc();
      if (at !== undefined) metrics?.invalidationLag.labels(via).observe(Math.max(0, Date.now() - at) / 1000);
    },
  });

  // Calls wait for the feed's position: a key fetched before it is known would be flushed by the first poll.
  // poll() never rejects, and the client's own timeouts bound how long an unreachable control plane takes.
  await feed.firstPoll;
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
    async close(graceMs = config.ops.shutdownGraceMs) {
      closing = true;
      // 1. Take no new connections; idle keep-alive ones go now, and each one
      // whose call finishes while we wait goes too, rather than holding shutdown.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      // 2. Calls in flight get until the deadline.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([edge.idle(), deadline]);
      clearTimeout(timer);
      // 3. Cut what remains; each cut call queues its settlement (billed for what it used) before idle() resolves.
      server.closeAllConnections();
      await edge.idle();
      await closed;
      clearInterval(sweep);
      feed.stop();
      // 4. Hand the settlements to the control plane, or leave them in the outbox for the next start.
      await metering.close(SETTLE_ON_CLOSE_MS);
      live.stop();
      await Promise.all([...pools.values()].map((p) => p.close()));
      await cp.close();
      await holds.close();
      redis?.disconnect();
      await observe.close();
    },
  };
}
