import { LRUCache } from 'lru-cache';
import type { ChangeTopic } from '../shared/contract/changes.js';
import type { ResolvedKey } from '../shared/contract/keys.js';
import type { NowMs } from '../shared/clock.js';
import type { ProxySettings } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { ControlPlaneUnavailable } from './control-plane-client.js';

interface Entry {
  key: ResolvedKey | null;
  fetchedAt: number;
}

export type Lookup = { kind: 'known'; key: ResolvedKey } | { kind: 'unknown' } | { kind: 'unavailable' };

export interface KeyCacheSource {
  resolveKey(hash: string): Promise<{ key: ResolvedKey | null }>;
}

/**
 * Key answers by SHA-256 of the presented key (DESIGN 4): fresh for
 * `keyFreshMs`, unknown keys for `keyNegativeMs`; when the control plane
 * cannot be reached, an answer known good stays usable for `keyStaleMs`
 * after it was last confirmed, and anything else is "unavailable" (503).
 * Change events drop the entries they touch; concurrent misses share one fetch.
 */
export function createKeyCache(source: KeyCacheSource, settings: ProxySettings, logger: Logger, now: NowMs = Date.now) {
  const cache = new LRUCache<string, Entry>({ max: settings.keyCacheSize });
  const inflight = new Map<string, Promise<Lookup>>();
  // Bumped by every invalidation: a fetch that raced one must not be cached.
  let generation = 0;
  // Plain counters, read by the metrics scrape: free on the lookup path.
  const stats = { hit: 0, miss: 0, stale: 0, unavailable: 0 };

  const answer = (e: Entry): Lookup => (e.key ? { kind: 'known', key: e.key } : { kind: 'unknown' });

  async function fetchKey(hash: string, stale: Entry | undefined): Promise<Lookup> {
    const started = generation;
    try {
      const { key } = await source.resolveKey(hash);
      const entry = { key, fetchedAt: now() };
      if (generation === started) cache.set(hash, entry);
      return answer(entry);
    } catch (err) {
      if (!(err instanceof ControlPlaneUnavailable)) logger.error({ err }, 'key resolution failed');
      else logger.warn({ err: err.message }, 'key resolution: control plane unavailable');
      if (stale?.key && now() - stale.fetchedAt < settings.keyStaleMs) {
        stats.stale++;
        return answer(stale);
      }
      stats.unavailable++;
      return { kind: 'unavailable' };
    }
  }

  return {
    async lookup(hash: string): Promise<Lookup> {
      const e = cache.get(hash);
      if (e) {
        const ttl = e.key ? settings.keyFreshMs : settings.keyNegativeMs;
        if (now() - e.fetchedAt < ttl) {
          stats.hit++;
          return answer(e);
        }
      }
      let p = inflight.get(hash);
      if (!p) {
        stats.miss++;
        p = fetchKey(hash, e).finally(() => inflight.delete(hash));
        inflight.set(hash, p);
      }
      return p;
    },
    /** A change-feed hint: forget every entry the changed subject could affect. */
    invalidate(topic: ChangeTopic, subjectId: string): void {
      generation++;
      for (const [hash, e] of cache.entries()) {
        const k = e.key;
        const hit =
          k === null
            ? topic === 'key'
            : (topic === 'key' && k.id === subjectId) ||
              (topic === 'team' && k.team_id === subjectId) ||
              (topic === 'workspace' && k.workspace_id === subjectId) ||
              (topic === 'user' && k.owner_user_id === subjectId);
        if (hit) cache.delete(hash);
      }
    },
    clear(): void {
      generation++;
      cache.clear();
    },
    size: () => cache.size,
    stats,
  };
}

export type KeyCache = ReturnType<typeof createKeyCache>;
