import { expect } from 'chai';
import { startChangeFeed, type CacheSuspectReason } from '../../../proxy/change-feed.js';
import type { ControlPlaneClient } from '../../../proxy/control-plane-client.js';
import type { KeyCache } from '../../../proxy/key-cache.js';
import { CHANGE_FEED_PAGE_SIZE, type ChangeEvent } from '../../../shared/contract/changes.js';
import { createLogger } from '../../../shared/logger.js';

const change = (id: number, subject = `k${id}`): ChangeEvent => ({ id, topic: 'key', subject_id: subject });

/**
 * A control plane's feed: `events` in the database, `version` its latest id
 * (set apart to play a feed gone back), and a push stream the test writes
 * frames to once the proxy opens it.
 */
function controlPlane(events: ChangeEvent[]) {
  const feed = { events, version: events.at(-1)?.id ?? 0, reads: [] as string[], gate: undefined as Promise<void> | undefined };
  const frames: string[] = [];
  let wake: () => void = () => undefined;
  let opened: () => void = () => undefined;
  const streamOpen = new Promise<void>((r) => (opened = r));
  const client = {
    version: async () => {
      feed.reads.push('version');
      return feed.version;
    },
    changesAfter: async (after: number) => {
      feed.reads.push(`after ${after}`);
      const answer = feed.events.filter((e) => e.id > after);
      await feed.gate;
      return { events: answer.slice(0, CHANGE_FEED_PAGE_SIZE) };
    },
    async openChangeStream(signal: AbortSignal) {
      opened();
      return (async function* () {
        while (!signal.aborted) {
          while (frames.length) yield Buffer.from(frames.shift()!);
          await new Promise<void>((r) => {
            wake = r;
            signal.addEventListener('abort', () => r());
          });
        }
      })();
    },
  };
  return {
    client: client as unknown as ControlPlaneClient,
    feed,
    streamOpen,
    ready(version: number) {
      frames.push(`event: ready\ndata: ${JSON.stringify({ version })}\n\n`);
      wake();
    },
    push(e: ChangeEvent) {
      frames.push(`event: change\ndata: ${JSON.stringify(e)}\n\n`);
      wake();
    },
  };
}

/** What the feed did to the cache: the subjects it dropped, and how often it marked everything for refresh. */
function recordingCache(oldest?: number) {
  const cache = {
    dropped: [] as string[],
    /** Times every answer was marked for refresh. */
    suspect: 0,
    /** Times the fetches under way were (the first position is learned while they are). */
    suspectInflight: 0,
    invalidate: (_topic: string, subject: string) => void cache.dropped.push(subject),
    markSuspect: (scope: 'all' | 'inflight') => void (scope === 'all' ? cache.suspect++ : cache.suspectInflight++),
    oldestVersion: () => oldest,
  };
  return cache;
}

const logger = createLogger('silent', 'change-feed-test');
const settle = () => new Promise((r) => setTimeout(r, 30));

function start(cp: ReturnType<typeof controlPlane>, cache: ReturnType<typeof recordingCache>, push = true, pollMs = 60_000) {
  const reasons: CacheSuspectReason[] = [];
  const feed = startChangeFeed(cp.client, cache as unknown as KeyCache, logger, pollMs, push, { onSuspect: (r) => reasons.push(r) });
  return { feed, reasons };
}

/** A feed started on `events` with its push stream open, the first sync done. */
async function streaming(events: ChangeEvent[], pollMs?: number) {
  const cp = controlPlane(events);
  const cache = recordingCache();
  const { feed, reasons } = start(cp, cache, true, pollMs);
  await feed.firstPoll;
  await cp.streamOpen;
  return { cp, cache, feed, reasons };
}

describe('change feed: catching up rather than emptying the key cache', () => {
  it('starts at the feed version with nothing cached, and drops nothing', async () => {
    const cp = controlPlane([change(1), change(2)]);
    const cache = recordingCache();
    const { feed, reasons } = start(cp, cache, false);
    await feed.firstPoll;
    expect(cp.feed.reads).to.deep.equal(['version', 'after 2']);
    expect([cache.dropped, reasons]).to.deep.equal([[], []]);
    feed.stop();
  });

  it('a first position learned after keys were cached resumes from the oldest cached answer and drops only what changed since', async () => {
    const cp = controlPlane([change(1), change(2), change(3)]);
    const cache = recordingCache(1);
    const { feed, reasons } = start(cp, cache, false);
    await feed.firstPoll;
    expect(cache.dropped).to.deep.equal(['k2', 'k3']);
    // Only fetches still under way, whose position is not known, are asked for again.
    expect([cache.suspect, cache.suspectInflight, reasons]).to.deep.equal([0, 1, []]);
    feed.stop();
  });

  it('a stream opening ahead of the position applies the changes in between, then the pushed ones, none lost or twice', async () => {
    const { cp, cache, feed, reasons } = await streaming([change(1)]);
    cp.feed.events.push(change(2), change(3));
    cp.feed.version = 3;
    cp.ready(3);
    // Pushed before the catch-up answered: applied at once, not again when the catch-up reads it.
    cp.feed.events.push(change(4));
    cp.push(change(4));
    await settle();
    cp.push(change(5));
    await settle();
    expect(cache.dropped.sort()).to.deep.equal(['k2', 'k3', 'k4', 'k5']);
    expect([cache.suspect, reasons]).to.deep.equal([0, []]);
    feed.stop();
  });

  it('a poll that read before the stream opened ahead does not close the gap: the changes between are still applied', async () => {
    const { cp, cache, feed } = await streaming([change(1)], 20);
    let open: () => void = () => undefined;
    cp.feed.gate = new Promise<void>((r) => (open = r));
    // A poll reads the feed at 1 and is slow to answer; meanwhile 2 and 3 commit, the stream reconnects at 3 and pushes 4.
    cp.feed.reads.length = 0;
    while (!cp.feed.reads.length) await new Promise((r) => setTimeout(r, 5));
    cp.feed.events.push(change(2), change(3), change(4));
    cp.feed.version = 4;
    cp.ready(3);
    cp.push(change(4));
    await settle();
    cp.feed.gate = undefined;
    open();
    await settle();
    expect(cache.dropped.sort()).to.deep.equal(['k2', 'k3', 'k4']);
    feed.stop();
  });

  it('a stream opening where the feed stands reads nothing more', async () => {
    const { cp, feed } = await streaming([change(7)]);
    cp.ready(7);
    await settle();
    expect(cp.feed.reads).to.deep.equal(['version', 'after 7']);
    feed.stop();
  });

  it('a stream opening behind the position because the fan-out lags: the feed is asked where it stands, nothing is marked', async () => {
    const { cp, cache, feed, reasons } = await streaming([change(1), change(2), change(3)]);
    cp.ready(2);
    await settle();
    cp.push(change(4));
    await settle();
    expect([cache.dropped, cache.suspect, reasons]).to.deep.equal([['k4'], 0, []]);
    feed.stop();
  });

  it('a feed gone back (a restored database): every answer marked for refresh, and the changes after the new position applied', async () => {
    const { cp, cache, feed, reasons } = await streaming([change(1), change(2), change(3)]);
    cp.feed.events = [change(1, 'r1')];
    cp.feed.version = 1;
    cp.ready(1);
    await settle();
    cp.feed.events.push(change(2, 'r2'));
    cp.push(change(2, 'r2'));
    await settle();
    expect(reasons).to.deep.equal(['feed_backwards']);
    expect(cache.suspect).to.equal(1);
    expect(cache.dropped, 'an id at or below the old position is applied once the feed went back').to.deep.equal(['r2']);
    feed.stop();
  });

  it('more changed than a page: applied, and every answer marked for refresh, since what lies beyond is unknown', async () => {
    const { cp, cache, feed, reasons } = await streaming([change(1)]);
    cp.feed.events = Array.from({ length: CHANGE_FEED_PAGE_SIZE + 5 }, (_, i) => change(i + 1));
    cp.feed.version = CHANGE_FEED_PAGE_SIZE + 5;
    cp.ready(cp.feed.version);
    await settle();
    expect(reasons).to.deep.equal(['page_full']);
    expect(cache.dropped).to.have.length(CHANGE_FEED_PAGE_SIZE);
    feed.stop();
  });

  it('settles firstPoll when the control plane cannot be reached, so a proxy still starts', async () => {
    const client = {
      version: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      changesAfter: async () => ({ events: [] }),
      openChangeStream: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    } as unknown as ControlPlaneClient;
    const cache = recordingCache();
    const feed = startChangeFeed(client, cache as unknown as KeyCache, logger, 60_000);
    await feed.firstPoll;
    expect([cache.dropped, cache.suspect]).to.deep.equal([[], 0]);
    feed.stop();
  });
});
