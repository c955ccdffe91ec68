import type { Redis } from 'ioredis';
import type { NowMs } from '../../shared/clock.js';
import type { ProxySettings } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import type { ControlPlaneClient } from '../control-plane-client.js';
import { createMemoryHoldStore, type HoldStore } from '../money/holds.js';
import { createRedisHoldStore } from '../money/holds-redis.js';
import { createHoldKeepAlive, type HoldKeepAlive } from '../money/keep-alive.js';
import { createMetering, type Metering } from '../money/metering.js';
import { openOutbox } from '../money/outbox.js';
import { moneySnapshot } from '../money/snapshot.js';
import type { RateLimits } from '../rate-limits.js';

/** The proxy's money parts, wired: holds (in process or Redis), the hold keep-alive, the outbox and metering. */
export interface ProxyMoney {
  holds: HoldStore;
  live: HoldKeepAlive;
  metering: Metering;
}

/**
 * Opens the money parts and, before the proxy listens, joins the shared
 * store's epoch and holds again what an earlier run left unsettled, so no
 * admission sees money this proxy already spent.
 */
export async function startMoney(
  settings: ProxySettings,
  redis: Redis | undefined,
  cp: ControlPlaneClient,
  limits: RateLimits,
  logger: Logger,
  now: NowMs,
): Promise<ProxyMoney> {
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
          return moneySnapshot(workspaceId, keyId, m, now());
        },
        logger,
        now,
      })
    : undefined;
  const holds: HoldStore = redisHolds ?? createMemoryHoldStore(ttlMs, now);
  const metering = createMetering({
    cp,
    holds,
    limits,
    logger,
    outbox,
    live,
    retryMaxMs: settings.settleRetryMaxMs,
    maxPending: settings.outboxMaxRecords,
    now,
  });
  await redisHolds?.start();
  await metering.start();
  return { holds, live, metering };
}
