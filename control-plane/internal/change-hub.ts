import type { ControlPlaneDeps } from '../deps.js';
import { changesSince, changeVersion, listenForChanges } from '../services/data-plane/key-resolution.js';
import type { ChangeEvent } from '../../shared/contract/changes.js';

export type ChangeListener = (events: ChangeEvent[]) => void;

/**
 * Fans change-feed rows out to the proxies connected to /internal/changes.
 * While anyone listens, the store's LISTEN on `tollgate_changes` (the NOTIFY
 * that change_feed_publish sends on commit, heard by every control-plane
 * replica) wakes it to read the feed; a read every `pollMs` is the backstop
 * (the feed's ids only grow, so "after the last id seen" misses nothing).
 */
export function createChangeHub(deps: ControlPlaneDeps, pollMs = 500) {
  const listeners = new Set<ChangeListener>();
  let lastId: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let unlisten: Promise<(() => Promise<void>) | undefined> | undefined;

  async function pump(): Promise<void> {
    if (lastId === undefined) lastId = await changeVersion(deps);
    for (;;) {
      const events = await changesSince(deps, lastId);
      if (!events.length) return;
      lastId = events[events.length - 1]!.id;
      for (const listener of listeners) listener(events);
    }
  }

  function tick(): void {
    // A notification during a read must cause one more read, not be lost.
    if (running) {
      again = true;
      return;
    }
    running = pump()
      .catch((err: unknown) => deps.logger.warn({ err }, 'change feed read failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          tick();
        }
      });
  }

  return {
    async subscribe(listener: ChangeListener): Promise<() => void> {
      if (lastId === undefined) lastId = await changeVersion(deps);
      listeners.add(listener);
      if (!timer) {
        timer = setInterval(tick, pollMs);
        timer.unref();
        unlisten = listenForChanges(deps, tick)?.catch((err: unknown) => {
          deps.logger.warn({ err }, 'LISTEN failed; change feed is polled only');
          return undefined;
        });
      }
      return () => {
        listeners.delete(listener);
        if (!listeners.size && timer) {
          clearInterval(timer);
          timer = undefined;
          lastId = undefined;
          void unlisten?.then((stop) => stop?.());
          unlisten = undefined;
        }
      };
    },
    /** The position a new subscriber starts from. */
    position: () => lastId,
  };
}
