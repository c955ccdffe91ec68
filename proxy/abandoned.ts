/** How an abandoned call's read ended; the metric's label values. */
export const ABANDONED_ENDS = ['complete', 'error', 'broken', 'timeout', 'over_limit'] as const;

export type AbandonedEnd = (typeof ABANDONED_ENDS)[number];

/**
 * The proxy's bound on calls it reads on after their client left
 * (docs/proxy.md, "A client that leaves"). The provider bills a call whether
 * or not anyone reads its answer, so the proxy reads it to the end, unrelayed,
 * to bill what the provider reports; each such read holds an upstream
 * connection, so at most `max` run at once and each for at most `readMs`.
 */
export interface AbandonedReads {
  readonly readMs: number;
  /** A slot for one more read, or false when `max` are running (the call is then cut and billed its hold). */
  take(): boolean;
  /** The read is over (its slot comes back), counted by how it ended. */
  end(how: AbandonedEnd): void;
  /** Over the limit: never started, only counted. */
  refused(): void;
  /** For the metrics: reads running now, and every read so far by how it ended. */
  stats(): { running: number; ended: Readonly<Record<AbandonedEnd, number>> };
}

export function createAbandonedReads(max: number, readMs: number): AbandonedReads {
  let running = 0;
  const ended: Record<AbandonedEnd, number> = { complete: 0, error: 0, broken: 0, timeout: 0, over_limit: 0 };
  return {
    readMs,
    take() {
      if (running >= max) return false;
      running++;
      return true;
    },
    end(how) {
      running--;
      ended[how]++;
    },
    refused() {
      ended.over_limit++;
    },
    stats: () => ({ running, ended }),
  };
}
