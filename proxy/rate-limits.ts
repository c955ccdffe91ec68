import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LimitState {
  limit: number;
  remaining: number;
  resetMs: number;
}

export type LimitOutcome =
  | { ok: true; requests?: LimitState; tokens?: LimitState }
  | { ok: false; which: 'requests' | 'tokens'; retryAfterMs: number; requests?: LimitState; tokens?: LimitState };

export interface RateLimits {
  /** Takes one request and `tokens` estimated tokens from the key's minute windows. */
  admit(keyId: string, rpm: number | null, tpm: number | null, tokens: number): Promise<LimitOutcome>;
  /** Corrects the token window once real usage is known (positive: more was used than taken). */
  adjustTokens(keyId: string, tpm: number | null, delta: number): Promise<void>;
}

function state(limit: number, res: RateLimiterRes): LimitState {
  return { limit, remaining: Math.max(0, res.remainingPoints), resetMs: res.msBeforeNext };
}

/**
 * Per-key RPM and TPM with rate-limiter-flexible's atomic limiters: in
 * process, or in Redis shared by every proxy. On a Redis failure a limiter
 * falls back to its in-process insurance twin (limits degrade to
 * per process, they do not fail open or closed).
 */
export function createRateLimits(redis: Redis | undefined, prefix: string): RateLimits {
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiter = (kind: 'rpm' | 'tpm', points: number): RateLimiterAbstract => {
    const name = `${kind}:${points}`;
    let l = limiters.get(name);
    if (!l) {
      const keyPrefix = `${prefix}:rl:${name}`;
      const memory = new RateLimiterMemory({ points, duration: 60, keyPrefix });
      l = redis
        ? new RateLimiterRedis({ storeClient: redis, points, duration: 60, keyPrefix, insuranceLimiter: memory, rejectIfRedisNotReady: true })
        : memory;
      limiters.set(name, l);
    }
    return l;
  };
  const take = async (l: RateLimiterAbstract, key: string, points: number): Promise<{ ok: boolean; res: RateLimiterRes }> => {
    try {
      return { ok: true, res: await l.consume(key, points) };
    } catch (rejected) {
      if (rejected instanceof RateLimiterRes) return { ok: false, res: rejected };
      throw rejected;
    }
  };

  return {
    async admit(keyId, rpm, tpm, tokens) {
      let requests: LimitState | undefined;
      let tokenState: LimitState | undefined;
      if (rpm !== null) {
        const r = await take(limiter('rpm', rpm), keyId, 1);
        requests = state(rpm, r.res);
        if (!r.ok) return { ok: false, which: 'requests', retryAfterMs: r.res.msBeforeNext, requests };
      }
      if (tpm !== null) {
        const t = await take(limiter('tpm', tpm), keyId, Math.min(tokens, tpm));
        tokenState = state(tpm, t.res);
        if (!t.ok) return { ok: false, which: 'tokens', retryAfterMs: t.res.msBeforeNext, requests, tokens: tokenState };
      }
      return { ok: true, requests, tokens: tokenState };
    },
    async adjustTokens(keyId, tpm, delta) {
      if (tpm === null || delta === 0) return;
      const l = limiter('tpm', tpm);
      if (delta > 0) await l.penalty(keyId, delta);
      else await l.reward(keyId, -delta);
    },
  };
}

/** OpenAI's x-ratelimit-* headers for a limited key. */
export function rateLimitHeaders(o: { requests?: LimitState; tokens?: LimitState }): Record<string, string> {
  const h: Record<string, string> = {};
  const put = (suffix: string, s: LimitState | undefined) => {
    if (!s) return;
    h[`x-ratelimit-limit-${suffix}`] = String(s.limit);
    h[`x-ratelimit-remaining-${suffix}`] = String(s.remaining);
    h[`x-ratelimit-reset-${suffix}`] = `${Math.max(0, Math.ceil(s.resetMs / 1000))}s`;
  };
  put('requests', o.requests);
  put('tokens', o.tokens);
  return h;
}
