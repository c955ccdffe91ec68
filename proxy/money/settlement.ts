import type { OutboxEntry, OutboxRecord, OutboxSlot } from './outbox.js';
import { entryOf } from './record-json.js';

/**
 * One settled call's usage record on its way to the control plane: its
 * report as JSON text (written to the outbox, then sent as it is) and what
 * releasing its hold needs. It lives until the control plane answers
 * (~100 ms), so it is kept to one object and one flat string.
 */
export interface Settlement extends OutboxEntry {
  requestId: string;
  keyId: string;
  /** When it joined the unsent queue (performance.now()): the report window runs from its oldest record. */
  queuedAt?: number;
  /** Where the record sits on disk; undefined until written (or if the write failed). */
  slot?: OutboxSlot;
}

/** A record read back from the outbox (replay) as a settlement. */
export function settlementOf(record: OutboxRecord, slot?: OutboxSlot): Settlement {
  return { ...entryOf(record), requestId: record.report.request_id, keyId: record.report.key_id, slot };
}

/** The promises metering has started and not seen end, so drain and shutdown can wait for them. */
export interface InFlight {
  track(p: Promise<void>): void;
  size(): number;
  /** Waits for every promise tracked so far to settle. */
  settled(): Promise<void>;
}

export function createInFlight(): InFlight {
  const pending = new Set<Promise<void>>();
  return {
    track(p) {
      pending.add(p);
      void p.finally(() => pending.delete(p));
    },
    size: () => pending.size,
    settled: async () => {
      await Promise.allSettled([...pending]);
    },
  };
}
