import type { Redis } from 'ioredis';
import type { Config } from '../../shared/config.js';
import type { KeyCache } from '../key-cache.js';
import type { SettlementWatch } from '../money/settlement-watch.js';

/** What /readyz answers: ready, and each check by name. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, boolean>;
}

/** The readiness check: a warm key cache keeps serving known keys through a control-plane outage. */
export function readinessOf(
  config: Config,
  keys: KeyCache,
  settlements: SettlementWatch,
  redis: Redis | undefined,
  closing: () => boolean,
): () => Readiness {
  return () => {
    const checks: Record<string, boolean> = {
      accepting: !closing(),
      models: config.models.models.size > 0,
      controlPlane: settlements.controlPlaneReachable(),
      keyCacheWarm: keys.size() > 0,
    };
    if (redis) checks.redis = redis.status === 'ready';
    const ready = checks.accepting! && checks.models! && (checks.controlPlane! || checks.keyCacheWarm!) && checks.redis !== false;
    return { ready, checks };
  };
}
