import type { Logger } from '../../shared/logger.js';
import type { HoldStore, LiveHold } from './holds.js';
import { liveHold } from './snapshot.js';

/** The holds this proxy owes, kept alive until each is released or acknowledged. */
export interface HoldKeepAlive {
  add(hold: LiveHold): void;
  /** A call ended: its live hold is now what it cost (changed in place; added if it was not there). */
  resize(hold: Omit<LiveHold, 'amountMicros'>, amountMicros: number): void;
  remove(requestId: string): void;
  /** Every live hold (what is put back when the shared store lost its data). */
  list(): LiveHold[];
  size(): number;
  stop(): void;
}

/**
 * Every hold this proxy owes: from admission until the call is released
 * unbilled, or until the control plane has acknowledged its usage (a call
 * whose settlement waits out a control-plane outage still owes its money).
 *
 * It keeps those holds alive (a call may outlive the hold TTL, and so may a
 * settlement waiting for the control plane) and is the list a proxy puts back
 * when the shared hold store lost its data. One shared timer sweeps every
 * live hold, rather than a timer per call: a per-call interval cost a timer
 * create and clear on every request. The timer runs only while some hold is
 * live. Each live hold is extended at least every `periodMs`, which the
 * caller keeps well under the TTL.
 */
export function createHoldKeepAlive(holds: Pick<HoldStore, 'extend'>, periodMs: number, logger: Logger): HoldKeepAlive {
  const live = new Map<string, LiveHold>();
  let timer: NodeJS.Timeout | undefined;

  function extendAll(): void {
    for (const [requestId, ids] of live) {
      holds.extend(requestId, ids).catch((err: unknown) => logger.warn({ err, requestId }, 'hold extension failed'));
    }
  }

  return {
    add(hold: LiveHold): void {
      live.set(hold.requestId, hold);
      if (!timer) {
        timer = setInterval(extendAll, periodMs);
        timer.unref();
      }
    },
    resize(hold, amountMicros) {
      const h = live.get(hold.requestId);
      if (h) h.amountMicros = amountMicros;
      else this.add(liveHold(hold.requestId, hold.workspaceId, hold.keyId, amountMicros, hold.keyBudget));
    },
    remove(requestId: string): void {
      live.delete(requestId);
      if (live.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    },
    list: (): LiveHold[] => [...live.values()],
    size: () => live.size,
    stop(): void {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
