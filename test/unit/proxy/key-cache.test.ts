import { expect } from 'chai';
import { createKeyCache } from '../../../proxy/key-cache.js';
import { ControlPlaneUnavailable } from '../../../proxy/control-plane-client.js';
import type { ResolvedKey } from '../../../shared/contract/keys.js';
import { testConfig } from '../../support/control-plane.js';
import { createLogger } from '../../../shared/logger.js';

const settings = { ...testConfig().proxy, keyFreshMs: 1000, keyNegativeMs: 100, keyStaleMs: 5000 };
const logger = createLogger('silent', 'test');

function resolved(id: string, over: Partial<ResolvedKey> = {}): ResolvedKey {
  return {
    id,
    org_id: 'o',
    workspace_id: 'w',
    workspace_slug: 's',
    team_id: 't',
    owner_user_id: 'u',
    revoked: false,
    expires_at: null,
    rpm: null,
    tpm: null,
    models: [],
    key_remaining_micros: null,
    key_version: 0,
    balance_micros: 1,
    balance_version: 0,
    ...over,
  };
}

/** Every subject a change event may name for key h1 (key k1, team t, workspace w, owner u). */
const H1_SUBJECTS = [
  ['key', 'k1'],
  ['team', 't'],
  ['workspace', 'w'],
  ['user', 'u'],
] as const;

function world() {
  let now = 0;
  let down = false;
  const calls: string[] = [];
  let version = 10;
  // While set, a fetch waits for it: a change can be applied while the fetch is under way.
  let gate: Promise<void> | undefined;
  const keys = new Map<string, ResolvedKey>([
    ['h1', resolved('k1')],
    ['h2', resolved('k2', { team_id: 't2', workspace_id: 'w2', owner_user_id: null })],
  ]);
  const source = {
    async resolveKey(hash: string) {
      calls.push(hash);
      await gate;
      if (down) throw new ControlPlaneUnavailable('down');
      return { key: keys.get(hash) ?? null, version };
    },
  };
  const cache = createKeyCache(source, settings, logger, () => now);
  return {
    cache,
    calls,
    tick: (ms: number) => (now += ms),
    setDown: (d: boolean) => (down = d),
    setVersion: (v: number) => (version = v),
    /** Holds the next fetches until the returned function is called. */
    hold(): () => void {
      let open: () => void = () => undefined;
      gate = new Promise<void>((r) => (open = r));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

describe('proxy: key cache', () => {
  it('serves a known key from cache while fresh and asks again after', async () => {
    const w = world();
    expect((await w.cache.lookup('h1')).kind).to.equal('known');
    w.tick(499);
    await w.cache.lookup('h1');
    expect(w.calls).to.deep.equal(['h1']);
    w.tick(501);
    await w.cache.lookup('h1');
    expect(w.calls).to.deep.equal(['h1', 'h1']);
  });

  it('refreshes a key in use in the background once half its fresh window has passed, answering at once meanwhile', async () => {
    const w = world();
    await w.cache.lookup('h1');
    w.tick(500);
    const hit = w.cache.cached('h1');
    expect(hit?.kind, 'answered without waiting').to.equal('known');
    expect(w.calls).to.deep.equal(['h1', 'h1']);
    // One refresh at a time, and the refreshed answer restarts the window.
    w.cache.cached('h1');
    expect(w.calls).to.have.length(2);
    await new Promise((r) => setImmediate(r));
    // Past the first answer's window, inside the refreshed one's (and past its half: the next refresh goes).
    w.tick(700);
    expect(w.cache.cached('h1')?.kind).to.equal('known');
    expect(w.calls).to.have.length(3);
  });

  it('never answers past the fresh window from cache: a failed background refresh leaves the outage rule in charge', async () => {
    const w = world();
    await w.cache.lookup('h1');
    w.setDown(true);
    w.tick(600);
    expect(w.cache.cached('h1')?.kind).to.equal('known');
    await new Promise((r) => setImmediate(r));
    w.tick(400);
    expect(w.cache.cached('h1'), 'stale: the caller must wait for an answer').to.equal(undefined);
    expect((await w.cache.lookup('h1')).kind, 'known good inside the stale window').to.equal('known');
  });

  it('a change during a fetch in flight: later lookups fetch again rather than share the older answer', async () => {
    const w = world();
    await w.cache.lookup('h1');
    w.tick(500);
    w.cache.cached('h1');
    w.cache.invalidate('key', 'k1');
    await w.cache.lookup('h1');
    expect(w.calls).to.deep.equal(['h1', 'h1', 'h1']);
  });

  it('remembers an unknown key only for the short negative window', async () => {
    const w = world();
    expect((await w.cache.lookup('nope')).kind).to.equal('unknown');
    await w.cache.lookup('nope');
    w.tick(100);
    await w.cache.lookup('nope');
    expect(w.calls).to.deep.equal(['nope', 'nope']);
  });

  it('shares one control-plane call among concurrent misses', async () => {
    const w = world();
    await Promise.all([w.cache.lookup('h1'), w.cache.lookup('h1'), w.cache.lookup('h1')]);
    expect(w.calls).to.deep.equal(['h1']);
  });

  it('with the control plane down, keeps a known-good key for the stale window and says unavailable for others', async () => {
    const w = world();
    await w.cache.lookup('h1');
    w.setDown(true);
    w.tick(1000);
    expect((await w.cache.lookup('h1')).kind).to.equal('known');
    expect((await w.cache.lookup('h2')).kind).to.equal('unavailable');
    w.tick(4000);
    expect((await w.cache.lookup('h1')).kind).to.equal('unavailable');
  });

  it('drops the entries a change event touches, by key, team, workspace or owner', async () => {
    for (const [topic, subject] of H1_SUBJECTS) {
      const w = world();
      await w.cache.lookup('h1');
      await w.cache.lookup('h2');
      w.cache.invalidate(topic, subject);
      await w.cache.lookup('h1');
      await w.cache.lookup('h2');
      expect(w.calls, `${topic} event`).to.deep.equal(['h1', 'h2', 'h1']);
    }
  });

  it('a key event also drops cached unknown keys (it may be a new key); replaced and evicted entries leave the index', async () => {
    const w = world();
    expect((await w.cache.lookup('nope')).kind).to.equal('unknown');
    w.cache.invalidate('key', 'k-new');
    await w.cache.lookup('nope');
    expect(w.calls).to.deep.equal(['nope', 'nope']);
    await w.cache.lookup('h1');
    w.tick(1000);
    await w.cache.lookup('h1');
    w.cache.invalidate('team', 't');
    await w.cache.lookup('h1');
    expect(w.calls.filter((c) => c === 'h1')).to.have.length(3);
  });

  it('a change to another key, team, workspace or owner during a fetch: the answer is still cached', async () => {
    const w = world();
    const open = w.hold();
    const fetching = w.cache.lookup('h1');
    for (const [topic, subject] of [
      ['key', 'k2'],
      ['team', 't2'],
      ['workspace', 'w2'],
      ['user', 'u2'],
    ] as const)
      w.cache.invalidate(topic, subject);
    open();
    expect((await fetching).kind).to.equal('known');
    expect(w.cache.cached('h1')?.kind, 'cached').to.equal('known');
    expect(w.calls).to.deep.equal(['h1']);
  });

  it('a change to one of its subjects during a fetch: the answer is not cached, so it never serves fail-static', async () => {
    for (const [topic, subject] of H1_SUBJECTS) {
      const w = world();
      const open = w.hold();
      const fetching = w.cache.lookup('h1');
      w.cache.invalidate(topic, subject);
      open();
      await fetching;
      expect(w.cache.cached('h1'), `${topic} event`).to.equal(undefined);
      w.setDown(true);
      expect((await w.cache.lookup('h1')).kind, `${topic} event, control plane down`).to.equal('unavailable');
    }
  });

  it('marked suspect: asked for again before its next use, yet still known good for the stale window while the control plane is down', async () => {
    const w = world();
    await w.cache.lookup('h1');
    w.cache.markSuspect('all');
    expect(w.cache.cached('h1'), 'not answered from the cache').to.equal(undefined);
    await w.cache.lookup('h1');
    expect(w.calls, 'asked again').to.deep.equal(['h1', 'h1']);
    expect(w.cache.cached('h1')?.kind, 'the new answer is trusted').to.equal('known');
    w.cache.markSuspect('all');
    w.setDown(true);
    w.tick(4000);
    expect((await w.cache.lookup('h1')).kind, 'inside the stale window').to.equal('known');
    w.tick(1000);
    expect((await w.cache.lookup('h1')).kind, 'past it').to.equal('unavailable');
  });

  it('a fetch under way when the cache is marked: its answer is kept but asked for again before its next use', async () => {
    const w = world();
    const open = w.hold();
    const fetching = w.cache.lookup('h1');
    w.cache.markSuspect('inflight');
    open();
    await fetching;
    expect(w.cache.cached('h1')).to.equal(undefined);
    w.setDown(true);
    expect((await w.cache.lookup('h1')).kind).to.equal('known');
  });

  it('knows the oldest change-feed position among its answers', async () => {
    const w = world();
    expect(w.cache.oldestVersion()).to.equal(undefined);
    w.setVersion(12);
    await w.cache.lookup('h1');
    w.setVersion(9);
    await w.cache.lookup('h2');
    w.setVersion(15);
    await w.cache.lookup('nope');
    expect(w.cache.oldestVersion()).to.equal(9);
  });
});
