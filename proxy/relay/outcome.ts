import type { AppError } from '../../shared/errors.js';
import type { AbandonedEnd } from '../abandoned.js';
import type { FailureReason } from '../routing/health.js';
import type { UsageTap } from '../wire/usage-tap.js';

/** How one attempt's answer ended, as the relay settles it (relay.ts). */
export type ForwardOutcome =
  /** Nothing reached the client yet: the caller answers with this error. */
  | { kind: 'failed'; error: AppError }
  /** The provider's own 3xx/4xx/5xx went through unchanged. */
  | { kind: 'upstream-error'; status: number; retryAfterMs?: number | undefined }
  | { kind: 'complete'; tap: UsageTap }
  /** Ended early after the client disconnected or the upstream broke mid-answer. */
  | { kind: 'cut'; tap: UsageTap | undefined; headersSent: boolean; by: 'client' | 'upstream' }
  /**
   * The client left after the request went to the provider, and the answer was
   * read on without being relayed (abandoned.ts): to its end (`complete`, or the
   * provider's own `error`), until the provider broke off (`broken`), or not at all
   * or not to its end (`timeout`, `over_limit`).
   */
  | { kind: 'abandoned'; tap: UsageTap | undefined; ended: AbandonedEnd }
  /** Only with failover: the provider failed before anything reached the client; the next deployment may take the call. */
  | { kind: 'retry'; reason: FailureReason; retryAfterMs: number | undefined };
