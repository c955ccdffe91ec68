import type { Logger } from '../shared/logger.js';
import type { HoldStore } from './holds.js';

type HoldIds = { workspaceId: string; keyId: string };

/**
 * Keeps the holds of calls in flight alive (a call may outlive the hold TTL).
 * One shared timer sweeps every live call, rather than a timer per call: a
 * per-call interval cost a timer create and clear on every request. The timer
 * runs only while some call is live. Each live hold is extended at least
 * every `periodMs`, which the caller keeps well under the TTL.
 */
export function createHoldKeepAlive(holds: HoldStore, periodMs: number, logger: Logger) {
  const live = new Map<string, HoldIds>();
  let timer: NodeJS.Timeout | undefined;

  function extendAll(): void {
    for (const [requestId, ids] of live) {
      holds.extend(requestId, ids).catch((err: unknown) => logger.warn({ err, requestId }, 'hold extension failed'));
    }
  }

  return {
    add(requestId: string, ids: HoldIds): void {
      live.set(requestId, ids);
      if (!timer) {
        timer = setInterval(extendAll, periodMs);
        timer.unref();
      }
    },
    remove(requestId: string): void {
      live.delete(requestId);
      if (live.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    },
  };
}
