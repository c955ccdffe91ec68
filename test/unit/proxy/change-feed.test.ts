import { expect } from 'chai';
import { startChangeFeed } from '../../../proxy/change-feed.js';
import type { ControlPlaneClient } from '../../../proxy/control-plane-client.js';
import type { KeyCache } from '../../../proxy/key-cache.js';
import { createLogger } from '../../../shared/logger.js';

/** A control plane whose feed stands at `version` and whose stream opens with `ready` at `readyAt`, then stays open. */
function controlPlane(version: number, readyAt: number) {
  let release: () => void = () => undefined;
  const client = {
    version: async () => version,
    changesAfter: async () => ({ events: [] }),
    async openChangeStream(signal: AbortSignal) {
      const closed = new Promise<void>((resolve) => {
        release = resolve;
        signal.addEventListener('abort', () => resolve());
      });
      return (async function* () {
        yield Buffer.from(`event: ready\ndata: ${JSON.stringify({ version: readyAt })}\n\n`);
        await closed;
      })();
    },
  };
  return { client: client as unknown as ControlPlaneClient, close: () => release() };
}

function countingCache() {
  const cache = { clears: 0, clear: () => void cache.clears++, invalidate: () => undefined };
  return cache;
}

const logger = createLogger('silent', 'change-feed-test');
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('change feed: when the key cache is flushed', () => {
  it('flushes once on the first poll, and not again when the stream opens where the feed already stands', async () => {
    const cp = controlPlane(7, 7);
    const cache = countingCache();
    const feed = startChangeFeed(cp.client, cache as unknown as KeyCache, logger, 60_000);
    await feed.firstPoll;
    expect(cache.clears).to.equal(1);
    await settle();
    expect(cache.clears).to.equal(1);
    feed.stop();
    cp.close();
  });

  it('flushes when the stream opens at another position than the one applied: events may have been missed', async () => {
    for (const readyAt of [9, 3]) {
      const cp = controlPlane(7, readyAt);
      const cache = countingCache();
      const feed = startChangeFeed(cp.client, cache as unknown as KeyCache, logger, 60_000);
      await feed.firstPoll;
      await settle();
      expect(cache.clears, `ready at ${readyAt}`).to.equal(2);
      feed.stop();
      cp.close();
    }
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
    const cache = countingCache();
    const feed = startChangeFeed(client, cache as unknown as KeyCache, logger, 60_000);
    await feed.firstPoll;
    expect(cache.clears).to.equal(0);
    feed.stop();
  });
});
