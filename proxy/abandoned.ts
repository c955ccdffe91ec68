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
  /** Set once the proxy shuts down: a client leaving then is cut as before, billed what was seen. */
  readonly stopped: boolean;
  /** A slot for one more read, whose `cut` ends it early; false when `max` are running (the call is then cut and billed its hold). */
  take(cut: () => void): boolean;
  /** The read is over (its slot comes back), counted by how it ended. */
  end(how: AbandonedEnd, cut: () => void): void;
  /** Over the limit: never started, only counted. */
  refused(): void;
  /** Shutdown's deadline: no read starts any more, and those running are cut now (billed their hold). */
  stop(): void;
  /** For the metrics: reads running now, and every read so far by how it ended. */
  stats(): { running: number; ended: Readonly<Record<AbandonedEnd, number>> };
}

export function createAbandonedReads(max: number, readMs: number): AbandonedReads {
  const running = new Set<() => void>();
  const ended: Record<AbandonedEnd, number> = { complete: 0, error: 0, broken: 0, timeout: 0, over_limit: 0 };
  let stopped = false;
  return {
    readMs,
    get stopped() {
      return stopped;
    },
    take(cut) {
      if (running.size >= max) return false;
      running.add(cut);
      return true;
    },
    end(how, cut) {
      running.delete(cut);
      ended[how]++;
    },
    refused() {
      ended.over_limit++;
    },
    stop() {
      stopped = true;
      for (const cut of [...running]) cut();
    },
    stats: () => ({ running: running.size, ended }),
  };
}
