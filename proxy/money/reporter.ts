import { USAGE_BATCH_MAX, type UsageKeyMoney } from '../../shared/contract/usage.js';
import type { Logger } from '../../shared/logger.js';
import { ControlPlaneUnavailable, type ControlPlaneClient } from '../control-plane-client.js';
import type { InFlight, Settlement } from './settlement.js';

const FIRST_RETRY_MS = 200;
/**
 * As many reports as one call to the control plane may carry: its cost per
 * statement (about 3 ms on the embedded store) is spread over more calls. On
 * PGlite, 27-30 µs per settled call in batches of 1,000 against 31-35 in
 * batches of 500 (the bench's ledger scenario).
 */
const MAX_BATCH = USAGE_BATCH_MAX;
const MAX_IN_FLIGHT = 2;
/**
 * How long a record on disk waits for company before it is reported to the
 * control plane (or less, once MAX_BATCH wait). Each report costs the
 * control plane a request and a statement whatever its size (on the embedded
 * store about 3 ms), so a call a millisecond apart must not each make one:
 * at one connection a 15 ms window made batches of ~9 and cost the control
 * plane over 1 ms per call. The record is already durable; the wait only
 * delays money coming back to the balance (the hold is released when the
 * report is acknowledged), never lets more out.
 */
const REPORT_MS = 100;

/**
 * Reports written records to the control plane (`POST /internal/usage`) in
 * batches, at most two in flight. A batch the control plane could not take
 * is retried whole, for as long as it takes, backing off up to `retryMaxMs`
 * (at once on `wake()`); a batch it refused (4xx) is split until the refused
 * record is alone, and that one is retried apart at the longest interval.
 */
export interface UsageReporter {
  queue(batch: Settlement[]): void;
  pump(): void;
  /** The control plane is reachable again: retry now, and start the backoff over. */
  wake(): void;
  /** Records queued or split apart, not yet sent. */
  queued(): boolean;
  /** Records not yet acknowledged: queued, or a report in flight. */
  unfinished(): boolean;
  /** On: report what is queued without waiting out the window (drain and shutdown). */
  hurry(on: boolean): void;
  /** No more reports: timers cleared. */
  stop(): void;
}

export interface UsageReporterDeps {
  cp: Pick<ControlPlaneClient, 'reportUsage'>;
  logger: Logger;
  inFlight: InFlight;
  retryMaxMs: number;
  /** The control plane recorded the batch; `money` is each known key's after it. */
  recorded(batch: Settlement[], money: UsageKeyMoney[]): Promise<void>;
}

export function createUsageReporter(deps: UsageReporterDeps): UsageReporter {
  const { cp, logger, inFlight } = deps;
  const unsent: Settlement[] = [];
  /** Batches to send as they are: the halves of a batch the control plane refused. */
  const exact: Settlement[][] = [];
  let sending = 0;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let reportTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let hurry = false;

  async function send(batch: Settlement[]): Promise<void> {
    let money: UsageKeyMoney[];
    try {
      money = await cp.reportUsage(batch);
    } catch (err) {
      if (!(err instanceof ControlPlaneUnavailable)) return refused(batch, err as Error);
      unsent.unshift(...batch);
      failures++;
      const delay = Math.min(FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 20), deps.retryMaxMs);
      logger.warn({ err: (err as Error).message, requests: batch.length, failures, retryInMs: delay }, 'usage report failed; retrying');
      if (!retryTimer && !stopped) {
        retryTimer = setTimeout(() => {
          retryTimer = undefined;
          pump();
        }, delay);
      }
      return;
    }
    failures = 0;
    await deps.recorded(batch, money);
  }

  /**
   * The control plane answered and refused the batch (a 4xx: a record it will
   * not take). One bad record must not hold back every other: the batch is
   * split until the refused record is alone, and that one stays in the outbox
   * with its hold, retried apart at the longest interval, and logged.
   */
  function refused(batch: Settlement[], err: Error): void {
    if (batch.length > 1) {
      const mid = Math.ceil(batch.length / 2);
      exact.push(batch.slice(0, mid), batch.slice(mid));
      return;
    }
    logger.error({ err: err.message, requestId: batch[0]!.requestId }, 'control plane refused a usage report; kept, and retried apart');
    const later = setTimeout(() => {
      exact.push(batch);
      pump();
    }, deps.retryMaxMs);
    later.unref();
  }

  /** The next batch for the control plane, once its oldest record has waited out the window (or enough have gathered). */
  function nextBatch(): Settlement[] | undefined {
    const split = exact.shift();
    if (split) return split;
    if (!unsent.length) return undefined;
    const wait = unsent[0]!.queuedAt! + REPORT_MS - performance.now();
    if (hurry || wait <= 0 || unsent.length >= MAX_BATCH) return unsent.splice(0, MAX_BATCH);
    if (!reportTimer) {
      reportTimer = setTimeout(() => {
        reportTimer = undefined;
        pump();
      }, wait);
    }
    return undefined;
  }

  function pump(): void {
    while (sending < MAX_IN_FLIGHT && !retryTimer && !stopped) {
      const batch = nextBatch();
      if (!batch) return;
      sending++;
      inFlight.track(
        send(batch).finally(() => {
          sending--;
          pump();
        }),
      );
    }
  }

  return {
    queue(batch) {
      const now = performance.now();
      for (const s of batch) s.queuedAt ??= now;
      unsent.push(...batch);
      pump();
    },
    pump,
    wake() {
      failures = 0;
      if (!retryTimer) return;
      clearTimeout(retryTimer);
      retryTimer = undefined;
      pump();
    },
    queued: () => unsent.length > 0 || exact.length > 0,
    unfinished: () => unsent.length > 0 || sending > 0,
    hurry(on) {
      hurry = on;
    },
    stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (reportTimer) clearTimeout(reportTimer);
      retryTimer = undefined;
      reportTimer = undefined;
    },
  };
}
