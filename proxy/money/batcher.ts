import type { Logger } from '../../shared/logger.js';
import type { Outbox } from './outbox.js';
import type { InFlight, Settlement } from './settlement.js';

/**
 * How long the first record of a batch waits for company before it goes to
 * disk. It is also the most a settled call waits before its record is on
 * disk, so it stays short: a crash loses at most this window.
 */
const GATHER_MS = 15;
/** A batch this big goes to disk at once rather than waiting out GATHER_MS. */
const FLUSH_AT = 200;

/** Gathers settled calls' records into batches, each one durable write to the outbox. */
export interface SettlementBatcher {
  add(settlement: Settlement): void;
  /** The gathered batch goes to disk now. */
  flush(): void;
  /** Flushes what has gathered unless a flush is already scheduled (drain). */
  nudge(): void;
  /** Records gathered, or a flush scheduled. */
  busy(): boolean;
}

export interface SettlementBatcherDeps {
  outbox: Pick<Outbox, 'append'>;
  logger: Logger;
  inFlight: InFlight;
  /** A batch is on disk (or its write failed: it is sent anyway): hand it to the reporter. */
  written(batch: Settlement[]): void;
  /** Whether the outbox took the batch: a refused write stops admissions until the disk takes writes again. */
  stored(ok: boolean): void;
}

export function createSettlementBatcher(deps: SettlementBatcherDeps): SettlementBatcher {
  const { outbox, logger, inFlight } = deps;
  let gathering: Settlement[] = [];
  let timer: NodeJS.Timeout | undefined;
  let immediate = false;

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    immediate = false;
    if (!gathering.length) return;
    const batch = gathering;
    gathering = [];
    inFlight.track(
      outbox.append(batch).then(
        (slot) => {
          for (const s of batch) s.slot = slot;
          deps.stored(true);
          deps.written(batch);
        },
        (err: unknown) => {
          // Not durable, but still sent: better than holding back the bill. New calls wait (stored(false)).
          logger.error({ err, requests: batch.length }, 'settlement outbox write failed');
          deps.stored(false);
          deps.written(batch);
        },
      ),
    );
  }

  function schedule(): void {
    if (gathering.length >= FLUSH_AT) {
      if (!immediate) {
        immediate = true;
        setImmediate(flush);
      }
      return;
    }
    if (!timer) timer = setTimeout(flush, GATHER_MS);
  }

  return {
    add(settlement) {
      gathering.push(settlement);
      schedule();
    },
    flush,
    nudge() {
      if (gathering.length && !timer && !immediate) flush();
    },
    busy: () => gathering.length > 0 || timer !== undefined || immediate,
  };
}
