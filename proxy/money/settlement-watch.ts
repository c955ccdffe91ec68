import type { Span } from '@opentelemetry/api';
import type { ControlPlaneClient } from '../control-plane-client.js';
import type { ProxyMetrics } from '../metrics.js';

/** A report metering gave up on never comes back: past this many, the oldest are forgotten. */
const MAX_PENDING = 100_000;

/** A traced settlement: when it settled, and the span that ends when it is recorded. */
interface Pending {
  settledAt: number;
  span: Span;
}

/** Settle → recorded lag, and whether the control plane is reachable (metrics, traces, readiness). */
export interface SettlementWatch {
  /** A call was settled at `settledAt` (performance.now()): its lag runs until the control plane records it. */
  watch(requestId: string, settledAt: number): void;
  /** The span that ends when the settlement is recorded. */
  traceSettlement(requestId: string, span: Span): void;
  /** Settlements watched and not yet recorded. */
  depth(): number;
  /** Whether the last call to the control plane succeeded. */
  controlPlaneReachable(): boolean;
  /** The client, with reachability and settlement recorded on the way through. */
  wrap(cp: ControlPlaneClient): ControlPlaneClient;
}

/**
 * Follows each settled call until the control plane has recorded its usage,
 * from the outside of metering: it wraps the control-plane client's usage
 * report, so whatever queueing metering does inside, the lag measured here is
 * settle → recorded. Every call to the control plane also tells whether it is
 * reachable.
 */
export function createSettlementWatch(metrics: ProxyMetrics | undefined): SettlementWatch {
  /**
   * Watched settlements by request id: the time it settled, or, once traced,
   * that with its span. A bare number for the untraced (every call while
   * metrics are on): no object per call kept ~100 ms until the answer.
   */
  const pending = new Map<string, number | Pending>();
  let reachable = false;
  const setUp = (up: boolean) => {
    reachable = up;
    metrics?.controlPlaneUp.set(up ? 1 : 0);
  };

  function recorded(requestId: string, now: number): void {
    const p = pending.get(requestId);
    if (p === undefined) return;
    pending.delete(requestId);
    const settledAt = typeof p === 'number' ? p : p.settledAt;
    metrics?.settlementLag.observe((now - settledAt) / 1000);
    if (typeof p !== 'number') p.span.end(now);
  }

  return {
    watch(requestId: string, settledAt: number): void {
      if (pending.has(requestId)) return;
      if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
      pending.set(requestId, settledAt);
    },
    traceSettlement(requestId: string, span: Span): void {
      const p = pending.get(requestId);
      if (p === undefined) span.end();
      else if (typeof p === 'number') pending.set(requestId, { settledAt: p, span });
      else p.span = span;
    },
    depth: () => pending.size,
    /** Whether the last call to the control plane succeeded. */
    controlPlaneReachable: () => reachable,
    /** The client, with reachability and settlement recorded on the way through. */
    wrap(cp: ControlPlaneClient): ControlPlaneClient {
      const track =
        <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          try {
            const r = await fn(...args);
            setUp(true);
            return r;
          } catch (err) {
            setUp(false);
            throw err;
          }
        };
      const report = track(cp.reportUsage);
      return {
        ...cp,
        resolveKey: track(cp.resolveKey),
        changesAfter: track(cp.changesAfter),
        version: track(cp.version),
        async reportUsage(reports) {
          const results = await report(reports);
          const now = performance.now();
          if (pending.size) for (const r of reports) recorded(r.requestId, now);
          return results;
        },
      };
    },
  };
}
