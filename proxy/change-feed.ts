import { createParser } from 'eventsource-parser';
import { CHANGE_FEED_PAGE_SIZE, changeEventSchema, changeVersionSchema, type ChangeEvent } from '../shared/contract/changes.js';
import type { Logger } from '../shared/logger.js';
import { parseAnswer, type ControlPlaneClient } from './control-plane-client.js';
import type { KeyCache } from './key-cache.js';

/**
 * Keeps the key cache honest: a push stream from the control
 * plane drops changed entries within milliseconds; the cache is flushed
 * whenever the stream (re)connects at a position other than the one already
 * applied, since events may have been missed; and a poll of the feed every
 * `pollMs` is the backstop if pushes stop arriving. `firstPoll` settles once
 * the first poll has answered or failed: until then, any key fetched may be
 * flushed by it.
 */
export function startChangeFeed(
  client: ControlPlaneClient,
  cache: KeyCache,
  logger: Logger,
  pollMs: number,
  push = true,
  hooks: {
    /** The control plane answered: whatever waits for it (settlement retries) may go now. */
    onReachable?: () => void;
    /** Told of each change applied, how it came and when it was recorded (metrics). */
    onApplied?: (via: 'push' | 'poll', recordedAt: number | undefined) => void;
  } = {},
) {
  let seen: number | undefined;
  let stopped = false;
  // An outage is logged once when it starts, not on every poll while it lasts.
  let pollFailing = false;
  const abort = new AbortController();

  const apply = (events: ChangeEvent[], via: 'push' | 'poll') => {
    for (const e of events) {
      if (seen !== undefined && e.id <= seen) continue;
      cache.invalidate(e.topic, e.subject_id);
      seen = e.id;
      hooks.onApplied?.(via, e.at);
    }
  };

  async function poll(): Promise<void> {
    try {
      if (seen === undefined) {
        seen = await client.version();
        cache.clear();
      } else {
        const { events } = await client.changesAfter(seen);
        if (events.length >= CHANGE_FEED_PAGE_SIZE) cache.clear();
        apply(events, 'poll');
      }
      hooks.onReachable?.();
      if (pollFailing) logger.info('change feed poll recovered');
      pollFailing = false;
    } catch (err) {
      // The control plane is down or answering nonsense: cached keys ride out the stale window.
      if (!pollFailing) logger.warn({ err: (err as Error).message }, 'change feed poll failed; cached keys stay until their stale window ends');
      pollFailing = true;
    }
  }

  async function stream(): Promise<void> {
    let delay = 250;
    while (!stopped) {
      try {
        const body = await client.openChangeStream(abort.signal);
        delay = 250;
        const parser = createParser({
          onEvent(ev) {
            if (ev.event === 'ready') {
              const { version } = parseAnswer(changeVersionSchema, ev.data, 'change stream ready');
              // Anything may have changed while we were not listening, unless the feed is exactly where we
              // left it (a feed that went back, a restored database, is as unknown as one that moved on).
              if (version !== seen) cache.clear();
              seen = Math.max(seen ?? 0, version);
              hooks.onReachable?.();
            } else if (ev.event === 'change') {
              apply([parseAnswer(changeEventSchema, ev.data, 'change stream event')], 'push');
            }
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of body) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      } catch (err) {
        if (stopped) return;
        logger.debug({ err: (err as Error).message }, 'change stream dropped; reconnecting');
      }
      if (stopped) return;
      await new Promise((r) => setTimeout(r, delay).unref());
      delay = Math.min(delay * 2, 5_000);
    }
  }

  const timer = setInterval(() => void poll(), pollMs);
  timer.unref();
  const firstPoll = poll();
  if (push) void stream();

  return {
    firstPoll,
    stop(): void {
      stopped = true;
      clearInterval(timer);
      abort.abort();
    },
  };
}
