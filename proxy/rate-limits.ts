import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { NowMs } from '../shared/clock.js';

export interface LimitState {
  limit: number;
  remaining: number;
  resetMs: number;
}

export type LimitOutcome =
  | { ok: true; requests?: LimitState; tokens?: LimitState }
  | { ok: false; which: 'requests' | 'tokens'; retryAfterMs: number; requests?: LimitState; tokens?: LimitState };

export interface RateLimits {
  /**
   * Takes one request and `tokens` estimated tokens from the key's minute
   * windows. In process the answer is immediate (no promise); only the
   * Redis limiters answer with one.
   */
  admit(keyId: string, rpm: number | null, tpm: number | null, tokens: number): LimitOutcome | Promise<LimitOutcome>;
  /**
   * Corrects the token window once real usage is known (positive: more was
   * used than taken). In process it is done at once (no promise).
   */
  adjustTokens(keyId: string, tpm: number | null, delta: number): void | Promise<void>;
}

function state(limit: number, res: { remainingPoints: number; msBeforeNext: number }): LimitState {
  return { limit, remaining: Math.max(0, res.remainingPoints), resetMs: res.msBeforeNext };
}

const WINDOW_MS = 60_000;

/**
 * Fixed one-minute windows per key, decided synchronously: the same rules
 * as rate-limiter-flexible's memory limiter (a window starts at a key's
 * first take and lasts a minute; a refused take still counts; corrections
 * move the count either way), without a promise and a timer per window.
 * Lapsed windows are swept once a minute instead of each holding a timer.
 */
export function createWindowCounter(now: NowMs = Date.now) {
  const windows = new Map<string, { used: number; endsAt: number }>();
  let sweepAt = now() + WINDOW_MS;
  return {
    /** Adds `points` (negative to give back) to the key's window; answers what is used and when the window ends. */
    add(key: string, points: number): { used: number; msBeforeNext: number } {
      const t = now();
      if (t >= sweepAt) {
        for (const [k, w] of windows) if (w.endsAt <= t) windows.delete(k);
        sweepAt = t + WINDOW_MS;
      }
      let w = windows.get(key);
      if (!w || w.endsAt <= t) windows.set(key, (w = { used: 0, endsAt: t + WINDOW_MS }));
      w.used += points;
      return { used: w.used, msBeforeNext: w.endsAt - t };
    },
  };
}

type WindowCounter = ReturnType<typeof createWindowCounter>;

/** Limits of one process (REDIS_URL unset): every decision is immediate. */
function createMemoryRateLimits(): RateLimits {
  // One counter per kind and limit, keyed by the key's id: no key string is built per call (a key's limit changing starts a new window, as before).
  const counters = { rpm: new Map<number, WindowCounter>(), tpm: new Map<number, WindowCounter>() };
  const counterOf = (kind: 'rpm' | 'tpm', limit: number): WindowCounter => {
    let c = counters[kind].get(limit);
    if (!c) counters[kind].set(limit, (c = createWindowCounter()));
    return c;
  };
  const take = (kind: 'rpm' | 'tpm', limit: number, keyId: string, points: number) => {
    const r = counterOf(kind, limit).add(keyId, points);
    return { ok: r.used <= limit, state: { limit, remaining: Math.max(0, limit - r.used), resetMs: r.msBeforeNext }, msBeforeNext: r.msBeforeNext };
  };
  return {
    admit(keyId, rpm, tpm, tokens) {
      let requests: LimitState | undefined;
      let tokenState: LimitState | undefined;
      if (rpm !== null) {
        const r = take('rpm', rpm, keyId, 1);
        requests = r.state;
        if (!r.ok) return { ok: false, which: 'requests', retryAfterMs: r.msBeforeNext, requests };
      }
      if (tpm !== null) {
        const t = take('tpm', tpm, keyId, Math.min(tokens, tpm));
        tokenState = t.state;
        if (!t.ok) return { ok: false, which: 'tokens', retryAfterMs: t.msBeforeNext, requests, tokens: tokenState };
      }
      return { ok: true, requests, tokens: tokenState };
    },
    adjustTokens(keyId, tpm, delta) {
      if (tpm !== null && delta !== 0) counterOf('tpm', tpm).add(keyId, delta);
    },
  };
}

/**
 * Per-key RPM and TPM: in process (synchronous windows, above), or in Redis
 * shared by every proxy with rate-limiter-flexible's atomic limiters. On a
 * Redis failure a limiter falls back to its in-process insurance twin
 * (limits degrade to per process, they do not fail open or closed).
 */
export function createRateLimits(redis: Redis | undefined, prefix: string): RateLimits {
  return redis ? createRedisRateLimits(redis, prefix) : createMemoryRateLimits();
}

function createRedisRateLimits(redis: Redis, prefix: string): RateLimits {
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiter = (kind: 'rpm' | 'tpm', points: number): RateLimiterAbstract => {
    const name = `${kind}:${points}`;
    let l = limiters.get(name);
    if (!l) {
      const keyPrefix = `${prefix}:rl:${name}`;
      const insuranceLimiter = new RateLimiterMemory({ points, duration: 60, keyPrefix });
      l = new RateLimiterRedis({ storeClient: redis, points, duration: 60, keyPrefix, insuranceLimiter, rejectIfRedisNotReady: true });
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

const resetOf = (s: LimitState): string => `${Math.max(0, Math.ceil(s.resetMs / 1000))}s`;

/**
 * OpenAI's x-ratelimit-* headers for a limited key. The names are written
 * out rather than built from a suffix: every admitted call makes these, and
 * literal names need no new string per header and per call.
 */
export function rateLimitHeaders(o: { requests?: LimitState; tokens?: LimitState }): Record<string, string> {
  const h: Record<string, string> = {};
  const { requests, tokens } = o;
  if (requests) {
    h['x-ratelimit-limit-requests'] = String(requests.limit);
    h['x-ratelimit-remaining-requests'] = String(requests.remaining);
    h['x-ratelimit-reset-requests'] = resetOf(requests);
  }
  if (tokens) {
    h['x-ratelimit-limit-tokens'] = String(tokens.limit);
    h['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    h['x-ratelimit-reset-tokens'] = resetOf(tokens);
  }
  return h;
}
