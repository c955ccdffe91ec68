import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../shared/logger.js';
import type { Affinity, createAffinity } from './affinity.js';

/**
 * Affinity shared by every proxy: a session's deployment is one Redis key,
 * `{prefix}:affinity:{hash of alias and session}`, set when a call of the
 * session completes and expiring `ttlMs` after the last one (a prompt cache
 * does not outlive an hour either). It is read before the deployments are
 * ordered, so a session's next call keeps to its deployment whichever proxy
 * the load balancer sends it to.
 *
 * The in-process map is kept too, written on every completion: while Redis
 * is down (a command then fails at once) or has lost the key, this proxy's
 * own memory answers, so affinity degrades to what it was per process.
 * Session names are hashed: bounded keys, and no client's session id in Redis.
 */
export function createRedisAffinity(redis: Redis, prefix: string, local: ReturnType<typeof createAffinity>, ttlMs: number, logger: Logger): Affinity {
  const key = (alias: string, session: string) =>
    `${prefix}:affinity:${createHash('sha256').update(alias).update('\n').update(session).digest('base64url')}`;
  let failing = false;
  const down = (err: unknown) => {
    if (!failing) logger.warn({ err: (err as Error).message }, 'session affinity: Redis unavailable, kept per process meanwhile');
    failing = true;
  };
  return {
    get(alias, session) {
      if (redis.status !== 'ready') return local.get(alias, session);
      return redis.get(key(alias, session)).then(
        (v) => {
          failing = false;
          return v === null ? local.get(alias, session) : Number(v);
        },
        (err: unknown) => {
          down(err);
          return local.get(alias, session);
        },
      );
    },
    set(alias, session, index) {
      local.set(alias, session, index);
      if (redis.status !== 'ready') return;
      redis.set(key(alias, session), index, 'PX', ttlMs).catch(down);
    },
  };
}
