import { setTimeout as sleep } from 'node:timers/promises';

/** SQLSTATEs of a statement PostgreSQL aborted so that another could go on: deadlock_detected, serialization_failure. */
const CONFLICT_SQLSTATES = new Set(['40P01', '40001']);

/** PostgreSQL gave up this statement for a concurrent one's sake: running it again can succeed. */
export function isConcurrencyConflict(err: unknown): boolean {
  return typeof err === 'object' && err !== null && CONFLICT_SQLSTATES.has((err as { code?: unknown }).code as string);
}

/**
 * Runs `fn` again, up to `attempts` runs in all, when PostgreSQL aborted it
 * as a deadlock or a serialization failure, after a short random pause so the
 * two sides do not meet again in step. Only for work that is idempotent and is
 * its own transaction: inside a caller's transaction the abort has spoiled the
 * transaction, and a rerun would only fail differently.
 */
export async function retryOnConcurrencyConflict<T>(fn: () => Promise<T>, attempts = 3, pauseMs = 20): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isConcurrencyConflict(err)) throw err;
      await sleep(Math.random() * pauseMs * attempt);
    }
  }
}
