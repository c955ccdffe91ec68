import { createUpstreamAuth } from './upstream-auth/index.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createUsageWarnings } from './money/usage-warnings.js';
import { createServer } from '../shared/node-http.js';
import { serveUpgrades } from './start/sockets.js';
import type { AddressInfo } from 'node:net';
import type { NowMs } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { createMetricsRegistry, type Registry } from '../shared/metrics.js';
import { startChangeFeed } from './change-feed.js';
import { createControlPlaneClient } from './control-plane-client.js';
import { bodyWorkOf } from './body-work/index.js';
import { createAbandonedReads } from './abandoned.js';
import { createLocalResponseIds, createRedisResponseIds } from './response-ids.js';
import { createEdgeHandler } from './edge/index.js';
import { createKeyCache } from './key-cache.js';
import { createProxyMetrics, type ProxyGaugeSources } from './metrics.js';
import { createSettlementWatch } from './money/settlement-watch.js';
import { createEdgeObserver } from './observe.js';
import { createRateLimits } from './rate-limits.js';
import { startMoney } from './start/money.js';
import { createUpstreamPools } from './start/pools.js';
import { readinessOf } from './start/readiness.js';
import { createRouting } from './routing/index.js';
import { startDeploymentReports } from './routing/report.js';
import { DEPLOYMENT_REPORT_EVERY_MS } from '../shared/contract/deployments.js';
import { connectRedis } from './start/redis.js';
import { stopServing } from './start/shutdown.js';
import { serveCleartextHttp2 } from './start/http2-cleartext.js';
import { createSigninForwarder } from './signin-forward.js';
import { createUpstreamAuthorizers } from './upstream-auth/index.js';

/** How long shutdown tries to hand queued usage to the control plane before leaving it in the outbox. */
const SETTLE_ON_CLOSE_MS = 5_000;

export interface RunningProxy {
  server: Server;
  url: string;
  /** Where this proxy's metrics are registered (undefined with METRICS_ENABLED=false). */
  metrics: Registry | undefined;
  /** Resolves once every usage report in flight has been taken (tests, shutdown). */
  drain(): Promise<void>;
  /** Sends the deployment-health report now instead of at its next tick (tests). */
  reportDeployments(): Promise<void>;
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

/**
 * Connections the kernel may queue before the proxy accepts them. Node's default (511) overflowed when
 * thousands of streams opened within seconds on a busy core (the bench's streams scenario: resets and connect
 * timeouts at the client, 0 with bare's faster accept); the kernel caps it at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4096;
/** An idle HTTP/1.1 connection or HTTP/2 session is closed after this long: longer than the 60 s idle timeout load balancers commonly keep, so the balancer closes first and never sends into a connection just closed. */
const KEEP_ALIVE_MS = 65_000;

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

  const redis = await connectRedis(config.redisUrl, settings, logger);
  const limits = createRateLimits(redis, settings.redisPrefix);
  const { holds, live, metering } = await startMoney(settings, redis, cp, limits, logger, now);
  // Every hold owed is in the keep-alive list, from admission until release or acknowledgement.
  gauges.holdsOutstanding = () => live.size();
  const pools = createUpstreamPools(settings);

  // The OpenTelemetry SDK is loaded only when tracing is on: about 20 MiB of a process that never traces.
  const endpoint = config.ops.tracesEndpoint;
  const tracing = endpoint ? (await import('../shared/tracing.js')).createTracing(endpoint, config.ops.serviceName ?? 'tollgate-proxy') : undefined;
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
  const readiness = readinessOf(config, keys, settlements, redis, () => closing);

  const routing = createRouting(settings, redis, registry, now, logger);
  const bodies = bodyWorkOf(settings);
  const abandoned = createAbandonedReads(settings.abandonedReadsMax, settings.abandonedReadMs);
  const responseIds = redis
    ? createRedisResponseIds(redis, settings.redisPrefix, settings.responseIdsMax, settings.responseIdTtlSeconds, logger)
    : createLocalResponseIds(settings.responseIdsMax, settings.responseIdTtlSeconds * 1000);
  gauges.abandoned = () => abandoned.stats();
  const edgeDeps = {
    config,
    logger,
    keys,
    limits,
    holds,
    metering,
    pool: pools.pool,
    now,
    observe,
    routing,
    bodies,
    abandoned,
    responseIds,
    usageWarnings: createUsageWarnings(logger),
    authorizers: createUpstreamAuthorizers(logger, now),
    upstreamAuth: createUpstreamAuth(process.env, logger),
  };
  const edge = createEdgeHandler(edgeDeps);
  const reports = startDeploymentReports(cp.reportDeployments, routing.health, config.models, DEPLOYMENT_REPORT_EVERY_MS, logger);
  const signin = createSigninForwarder(options.controlPlaneUrl, logger);
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (signin.handle(req, res)) return;
    if (req.url === '/readyz') {
      const r = readiness();
      const body = JSON.stringify({ status: r.ready ? 'ready' : 'not ready', checks: r.checks });
      res.writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    edge.handle(req, res);
  };
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, handle);
  // Requests Node's parser refuses (e.g. Content-Length with Transfer-Encoding) still get a JSON error with an id.
  server.on('clientError', edge.clientError);
  const h2c = settings.http2Cleartext ? serveCleartextHttp2(server, handle, KEEP_ALIVE_MS) : undefined;
  const sockets = serveUpgrades(server, settings, edgeDeps, edge.handle, logger, metrics, gauges);
  const feed = startChangeFeed(cp, keys, logger, settings.versionPollMs, options.changePush ?? true, {
    // The control plane answering again is the signal for settlement retries to go at once.
    onReachable: () => metering.wake(),
    onApplied: (via, at) => {
      sockets?.recheckKeys();
      metrics?.invalidations.labels(via).inc();
      if (at !== undefined) metrics?.invalidationLag.labels(via).observe(Math.max(0, Date.now() - at) / 1000);
    },
    onSuspect: (reason) => (metrics?.keyCacheClears.labels(reason).inc(), sockets?.recheckKeys()),
  });

  // Calls wait for the feed's position, so no key is fetched before the feed knows where it stands.
  // The first sync never rejects, and the client's own timeouts bound how long an unreachable control plane takes.
  await feed.firstPoll;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? config.proxyPort, host: options.host ?? config.host, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  void reports.send();
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    metrics: registry,
    drain: () => metering.drain(),
    reportDeployments: () => reports.send(),
    async close(graceMs = config.ops.shutdownGraceMs) {
      closing = true;
      // 1–3. No new connections (HTTP/2 sessions told to go away), calls in flight until the deadline, then the rest cut and billed (sockets too: 1001).
      sockets?.drain();
      h2c?.drain();
      await stopServing(server, edge, graceMs, abandoned, () => {
        sockets?.closeAll();
        h2c?.closeAll();
      });
      feed.stop();
      reports.stop();
      // 4. Hand the settlements to the control plane, or leave them in the outbox for the next start.
      await metering.close(SETTLE_ON_CLOSE_MS);
      live.stop();
      await pools.close();
      await bodies.close();
      await cp.close();
      await signin.close();
      await holds.close();
      redis?.disconnect();
      await observe.close();
    },
  };
}
