import type { OutboxRecord, OutboxSlot } from './outbox.js';

/** One settled call's usage record on its way to the control plane. */
export interface Settlement {
  record: OutboxRecord;
  /** When it joined the unsent queue (performance.now()): the report window runs from its oldest record. */
  queuedAt?: number;
  /** Where the record sits on disk; undefined until written (or if the write failed). */
  slot?: OutboxSlot;
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
