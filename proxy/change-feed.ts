import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { CHANGE_FEED_PAGE_SIZE, changeEventSchema, changeVersionSchema, type ChangeEvent } from '../shared/contract/changes.js';
import type { Logger } from '../shared/logger.js';
import { parseAnswer, type ControlPlaneClient } from './control-plane-client.js';
import type { KeyCache } from './key-cache.js';

/** Why the change feed could not say what changed, so every cached key answer was marked for refresh (a metric label). */
export type CacheSuspectReason = 'feed_backwards' | 'page_full';

/** What the feed needs of the key cache. */
type FeedCache = Pick<KeyCache, 'invalidate' | 'markSuspect' | 'oldestVersion'>;

/**
 * Keeps the key cache honest: a push stream from the control plane drops
 * changed entries within milliseconds, and a poll of the feed every `pollMs`
 * is the backstop if pushes stop arriving.
 *
 * The feed's position (`seen`, the last change applied) is only ever moved
 * by applying the changes up to it. When the stream (re)connects ahead of
 * it, or the first position is learned after keys were cached, the changes
 * after the last one applied (or after the oldest cached answer) are read
 * and applied: only the keys they name are dropped, so a control-plane
 * restart does not empty the cache a moment before an outage that the cache
 * exists for. Only where what changed cannot be known — the feed went back
 * (a restored database), or more changed than one page — is every answer
 * marked for refresh, and even then it keeps answering for the stale window
 * while the control plane is away (docs/operations.md, "What the key cache
 * trusts in an outage"). `firstPoll` settles once the first sync has
 * answered or failed.
 */
export function startChangeFeed(
  client: ControlPlaneClient,
  cache: FeedCache,
  logger: Logger,
  pollMs: number,
  push = true,
  hooks: {
    /** The control plane answered: whatever waits for it (settlement retries) may go now. */
    onReachable?: () => void;
    /** Told of each change applied, how it came and when it was recorded (metrics). */
    onApplied?: (via: 'push' | 'poll', recordedAt: number | undefined) => void;
    /** Told each time every cached answer was marked for refresh, and why (metrics). */
    onSuspect?: (reason: CacheSuspectReason) => void;
  } = {},
) {
  let seen: number | undefined;
  // An outage is logged once when it starts, not on every poll while it lasts.
  let pollFailing = false;
  const abort = new AbortController();
  // The stream is ahead of `seen` (it opened past it, or before any position): until a sync has read the
  // changes in between, its events are applied at once but do not move `seen`; their ids wait in `ahead`.
  let behind = false;
  const ahead = new Set<number>();
  // The stream opened behind `seen`: the control plane's fan-out lagging the database, or a feed gone back.
  let checkBack = false;
  // Readies heard: a sync that began before the latest one read too early to close the gap it opened.
  let readies = 0;

  const apply = (events: ChangeEvent[], via: 'push' | 'poll') => {
    for (const e of events) {
      if (seen !== undefined && e.id <= seen) continue;
      // Applied already, from the stream while the feed caught up: only the position moves.
      if (!ahead.delete(e.id)) {
        cache.invalidate(e.topic, e.subject_id);
        hooks.onApplied?.(via, e.at);
      }
      seen = e.id;
    }
  };
  const applyAhead = (e: ChangeEvent) => {
    if (ahead.has(e.id) || (!checkBack && seen !== undefined && e.id <= seen)) return;
    cache.invalidate(e.topic, e.subject_id);
    hooks.onApplied?.('push', e.at);
    ahead.add(e.id);
  };
  const suspect = (reason: CacheSuspectReason) => {
    cache.markSuspect('all');
    hooks.onSuspect?.(reason);
    logger.warn({ reason }, 'change feed cannot say what changed; every cached key is asked for again before its next use');
  };

  /** The first position: where the oldest cached answer was read, so the changes since it are applied. */
  async function findPosition(): Promise<number> {
    const version = await client.version();
    // A fetch under way was read at a position not known yet: its answer is asked for again before use.
    cache.markSuspect('inflight');
    const oldest = cache.oldestVersion();
    if (oldest === undefined || oldest <= version) return oldest ?? version;
    suspect('feed_backwards');
    return version;
  }

  /** Where the feed really stands, when the stream opened behind `seen`. */
  async function checkBackwards(at: number): Promise<number> {
    checkBack = false;
    const version = await client.version();
    if (version >= at) return at;
    suspect('feed_backwards');
    return version;
  }

  /** Reads and applies the changes after `seen` (one page), finding the position first if there is none. */
  async function syncOnce(): Promise<void> {
    const began = readies;
    if (seen === undefined) seen = await findPosition();
    else if (checkBack) seen = await checkBackwards(seen);
    const { events } = await client.changesAfter(seen);
    apply(events, 'poll');
    // More than a page changed: the next sync reads on from the page's end; until then nobody knows what changed.
    if (events.length >= CHANGE_FEED_PAGE_SIZE) return suspect('page_full');
    if (!behind || began !== readies) return;
    behind = false;
    if (ahead.size) seen = Math.max(seen!, ...ahead);
    ahead.clear();
  }

  async function syncLogged(): Promise<void> {
    try {
      await syncOnce();
      hooks.onReachable?.();
      if (pollFailing) logger.info('change feed poll recovered');
      pollFailing = false;
    } catch (err) {
      // The control plane is down or answering nonsense: cached keys ride out the stale window.
      if (!pollFailing) logger.warn({ err: (err as Error).message }, 'change feed poll failed; cached keys stay until their stale window ends');
      pollFailing = true;
    }
  }

  // One sync at a time: a poll and a stream's catch-up read and move the same position.
  const sync = oneAtATime(syncLogged, abort.signal);

  function onReady(version: number): void {
    hooks.onReachable?.();
    readies++;
    if (version === seen && !behind) return;
    // Behind `seen`: the sync asks where the feed stands (a lagging fan-out, or a feed gone back); until it
    // knows, the stream's events are applied even at or below `seen`. Ahead, or no position yet: the sync
    // reads the changes in between.
    if (seen !== undefined && version < seen) checkBack = true;
    behind = true;
    void sync();
  }

  const onEvent = (ev: EventSourceMessage) => {
    if (ev.event === 'ready') {
      onReady(parseAnswer(changeVersionSchema, ev.data, 'change stream ready').version);
    } else if (ev.event === 'change') {
      const e = parseAnswer(changeEventSchema, ev.data, 'change stream event');
      if (behind) applyAhead(e);
      else apply([e], 'push');
    }
  };

  const timer = setInterval(() => void sync(), pollMs);
  timer.unref();
  const firstPoll = sync();
  if (push) void followStream(client, abort.signal, onEvent, logger);

  return {
    firstPoll,
    stop(): void {
      clearInterval(timer);
      abort.abort();
    },
  };
}

/** Holds the control plane's push stream open, reconnecting with backoff, until `signal` aborts. */
async function followStream(client: ControlPlaneClient, signal: AbortSignal, onEvent: (ev: EventSourceMessage) => void, logger: Logger) {
  let delay = 250;
  while (!signal.aborted) {
    try {
      const body = await client.openChangeStream(signal);
      delay = 250;
      const parser = createParser({ onEvent });
      const decoder = new TextDecoder();
      for await (const chunk of body) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
    } catch (err) {
      if (signal.aborted) return;
      logger.debug({ err: (err as Error).message }, 'change stream dropped; reconnecting');
    }
    if (signal.aborted) return;
    await new Promise((r) => setTimeout(r, delay).unref());
    delay = Math.min(delay * 2, 5_000);
  }
}

/** Runs `fn` one at a time: a call while it runs asks for one more run after it, and shares the running one's promise. */
function oneAtATime(fn: () => Promise<void>, signal: AbortSignal): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await fn();
      } while (again && !signal.aborted);
    })().finally(() => (running = undefined));
    return running;
  };
}
