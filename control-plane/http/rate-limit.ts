import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../shared/errors.js';

/**
 * A fixed-window request limit per key (an org id, a client address), kept
 * in this control-plane replica's memory: with N replicas behind a balancer
 * the effective limit is up to N times the setting (docs/security.md).
 * The refusal is an AppError, so each surface answers 429 in its own
 * dialect, with `retry-after` in whole seconds.
 */
export interface RequestLimiter {
  take(key: string): Promise<void>;
}

export function createRequestLimiter(perMinute: number, what: string): RequestLimiter {
  const limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
  return {
    async take(key) {
      try {
        await limiter.consume(key);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        throw new AppError('rate_limited', `Too many ${what}; retry in ${seconds} s.`, { headers: { 'retry-after': String(seconds) } });
      }
    },
  };
}
