import { Redis } from 'ioredis';
import type { ProxySettings } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';

/**
 * The shared store's connection, when one is configured. No offline queue:
 * while Redis is down a command fails at once, and the caller applies the
 * outage policy instead of waiting. Reconnect attempts stay well inside the
 * hold fence, so a restarted Redis is noticed in time.
 */
export async function connectRedis(url: string | undefined, settings: ProxySettings, logger: Logger): Promise<Redis | undefined> {
  if (!url) return undefined;
  const retryCap = Math.max(50, Math.floor(settings.holdFenceMs / 4));
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times: number) => Math.min(times * 50, retryCap),
  });
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));
  await redis.connect();
  return redis;
}
