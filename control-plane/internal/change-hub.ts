import type { ControlPlaneDeps } from '../deps.js';
import { changesSince, changeVersion, type ChangeEvent } from '../services/key-resolution.js';

export type ChangeListener = (events: ChangeEvent[]) => void;

/**
 * Fans change-feed rows out to the proxies connected to /internal/changes.
 * While anyone listens it reads the feed every `pollMs` (the feed is
 * append-only with a bigserial id, so reading "after the last id seen" never
 * misses a committed row), and LISTEN wakes it early where the store offers it.
 */
export function createChangeHub(deps: ControlPlaneDeps, pollMs = 200) {
  const listeners = new Set<ChangeListener>();
  let lastId: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

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
    running ??= pump()
      .catch((err: unknown) => deps.logger.warn({ err }, 'change feed read failed'))
      .finally(() => {
        running = undefined;
      });
  }

  return {
    async subscribe(listener: ChangeListener): Promise<() => void> {
      if (lastId === undefined) lastId = await changeVersion(deps);
      listeners.add(listener);
      if (!timer) {
        timer = setInterval(tick, pollMs);
        timer.unref();
      }
      return () => {
        listeners.delete(listener);
        if (!listeners.size && timer) {
          clearInterval(timer);
          timer = undefined;
          lastId = undefined;
        }
      };
    },
    /** The position a new subscriber starts from. */
    position: () => lastId,
  };
}
