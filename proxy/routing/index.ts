import type { Redis } from 'ioredis';
import type { NowMs } from '../../shared/clock.js';
import type { ProxySettings } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import type { Registry } from '../../shared/metrics.js';
import { createAffinity } from './affinity.js';
import { createRedisAffinity } from './affinity-redis.js';
import { createBalancer } from './balance.js';
import { createDeploymentHealth } from './health.js';
import { createRedisDeploymentHealth } from './health-redis.js';
import { createRoutingMetrics } from './metrics.js';
import type { Routing } from './route-call.js';

/** Sessions remembered per process for affinity; an entry is a few dozen bytes. */
const AFFINITY_ENTRIES = 50_000;
/** How long Redis remembers a session's deployment after its last call (a 1-hour prompt cache lasts no longer). */
const AFFINITY_TTL_MS = 3_600_000;

/** Routing for one proxy: deployment health and session affinity in Redis when there is one (shared by every proxy), in process otherwise. */
export function createRouting(
  settings: ProxySettings,
  redis: Redis | undefined,
  registry: Registry | undefined,
  now: NowMs,
  logger: Logger,
): Routing {
  const health = { failures: settings.deploymentFailures, cooldownMs: settings.deploymentCooldownMs };
  const affinity = createAffinity(AFFINITY_ENTRIES);
  return {
    balancer: createBalancer(),
    affinity: redis ? createRedisAffinity(redis, settings.redisPrefix, affinity, AFFINITY_TTL_MS, logger) : affinity,
    health: redis ? createRedisDeploymentHealth(redis, settings.redisPrefix, health, now, logger) : createDeploymentHealth(health, now),
    metrics: registry ? createRoutingMetrics(registry) : undefined,
    now,
  };
}
