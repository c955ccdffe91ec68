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
    id, org_id: 'o', workspace_id: 'w', workspace_slug: 's', team_id: 't', owner_user_id: 'u', revoked: false, expires_at: null,
    rpm: null, tpm: null, models: [], key_remaining_micros: null, key_version: 0, balance_micros: 1, balance_version: 0, ...over,
  };
}

function world() {
  let now = 0;
  let down = false;
  const calls: string[] = [];
  const keys = new Map<string, ResolvedKey>([['h1', resolved('k1')], ['h2', resolved('k2', { team_id: 't2', workspace_id: 'w2', owner_user_id: null })]]);
  const source = {
    async resolveKey(hash: string) {
      calls.push(hash);
      if (down) throw new ControlPlaneUnavailable('down');
      return { key: keys.get(hash) ?? null };
    },
  };
  const cache = createKeyCache(source, settings, logger, () => now);
  return { cache, calls, tick: (ms: number) => (now += ms), setDown: (d: boolean) => (down = d) };
}

describe('proxy: key cache', () => {
  it('serves a known key from cache while fresh and asks again after', async () => {
    const w = world();
    expect((await w.cache.lookup('h1')).kind).to.equal('known');
    w.tick(999);
    await w.cache.lookup('h1');
    expect(w.calls).to.deep.equal(['h1']);
    w.tick(1);
    await w.cache.lookup('h1');
    expect(w.calls).to.deep.equal(['h1', 'h1']);
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
    for (const [topic, subject] of [['key', 'k1'], ['team', 't'], ['workspace', 'w'], ['user', 'u']] as const) {
      const w = world();
      await w.cache.lookup('h1');
      await w.cache.lookup('h2');
      w.cache.invalidate(topic, subject);
      await w.cache.lookup('h1');
      await w.cache.lookup('h2');
      expect(w.calls, `${topic} event`).to.deep.equal(['h1', 'h2', 'h1']);
    }
  });
});
