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
  /** No background refresh before this (set after one failed, so an outage is not asked every call). */
  refreshAfter: number;
  /** The answer a hit gives, made once per entry rather than per call (nobody changes it). */
  answer: Lookup;
  /** The change-feed position the answer is at least as new as (0 when the source did not say). */
  version: number;
  /**
   * Changes may have been missed since it was fetched (the feed could not say which): it is asked for
   * again before its next use, but still answers for the stale window while the control plane is away.
   */
  suspect: boolean;
}

/** A fetch under way: what happened while it was, so its answer is kept only when nothing since could undo it. */
interface Race {
  /** The subjects ("team:<id>", …) change events named meanwhile. */
  touched: Set<string>;
  /** Any key event meanwhile: it may be a new key whose hash was looked up as unknown. */
  keyEvent: boolean;
  /** The whole cache was marked suspect meanwhile. */
  suspect: boolean;
}

export type Lookup = { kind: 'known'; key: ResolvedKey } | { kind: 'unknown' } | { kind: 'unavailable' };

export interface KeyCacheSource {
  resolveKey(hash: string): Promise<{ key: ResolvedKey | null; version?: number }>;
}

/** How long a failed background refresh waits before the next one is tried. */
const REFRESH_RETRY_MS = 1_000;

/** The ids a change event may name, each with the entries it touches. */
function subjects(k: ResolvedKey): string[] {
  const out = [`key:${k.id}`, `team:${k.team_id}`, `workspace:${k.workspace_id}`];
  if (k.owner_user_id !== null) out.push(`user:${k.owner_user_id}`);
  return out;
}

/**
 * Key answers by SHA-256 of the presented key: fresh for
 * `keyFreshMs`, unknown keys for `keyNegativeMs`; when the control plane
 * cannot be reached, an answer known good stays usable for `keyStaleMs`
 * after it was last confirmed, and anything else is "unavailable" (503).
 *
 * A key in use never waits for the control plane: once half its fresh
 * window has passed, the next lookup answers from the cache and refreshes it
 * in the background, so a hot key is re-confirmed before it goes stale. No
 * answer is used beyond its fresh window that way (only the outage rule
 * above does), so freshness is exactly what it was.
 *
 * Change events drop the entries they touch at once, found through an index
 * by key, team, workspace and owner rather than a scan of the cache; a
 * dropped answer is never used fail-static, since the change may have been a
 * revocation. A fetch that a change event raced is kept only when the event
 * named none of the key's subjects. When the change feed cannot say what
 * changed (it went back, or more changed than a page), every entry is marked
 * suspect instead: asked for again before its next use, still answering for
 * the stale window while the control plane is away. Concurrent misses share
 * one fetch.
 */
export interface KeyCache {
  /** The answer without waiting, when the cache has a fresh one (refreshing it ahead of time if due). */
  cached(hash: string): Lookup | undefined;
  /** The cached answer, else the control plane's (concurrent misses share one fetch). */
  lookup(hash: string): Promise<Lookup>;
  /** A change-feed hint: forget every entry the changed subject could affect. */
  invalidate(topic: ChangeTopic, subjectId: string): void;
  /** Changes may have been missed: every answer (and every fetch under way, with `inflight` only those) is asked for again before its next use. */
  markSuspect(scope: 'all' | 'inflight'): void;
  /** The oldest change-feed position a cached answer is at: where a feed that lost its position must resume. */
  oldestVersion(): number | undefined;
  size(): number;
  /** Plain counters, read by the metrics scrape. */
  readonly stats: { hit: number; miss: number; stale: number; unavailable: number };
}

export function createKeyCache(source: KeyCacheSource, settings: ProxySettings, logger: Logger, now: NowMs = Date.now): KeyCache {
  // subject ("team:<id>", …) → hashes cached under it; unknown-key hashes apart (any key event drops them).
  const index = new Map<string, Set<string>>();
  const negatives = new Set<string>();
  const unindex = (e: Entry, hash: string): void => {
    if (!e.key) {
      negatives.delete(hash);
      return;
    }
    for (const s of subjects(e.key)) {
      const set = index.get(s);
      if (!set) continue;
      set.delete(hash);
      if (set.size === 0) index.delete(s);
    }
  };
  // Every way an entry leaves (evicted, replaced, deleted, cleared) unindexes it, synchronously.
  const cache = new LRUCache<string, Entry>({ max: settings.keyCacheSize, dispose: unindex });
  const store = (hash: string, e: Entry): void => {
    cache.set(hash, e);
    if (!e.key) {
      negatives.add(hash);
      return;
    }
    for (const s of subjects(e.key)) {
      let set = index.get(s);
      if (!set) index.set(s, (set = new Set()));
      set.add(hash);
    }
  };
  const inflight = new Map<string, Promise<Lookup>>();
  // Every fetch under way, shared or no longer shared, with the changes it raced.
  const racing = new Set<Race>();
  // Plain counters, read by the metrics scrape: free on the lookup path.
  const stats = { hit: 0, miss: 0, stale: 0, unavailable: 0 };

  const halfFresh = settings.keyFreshMs / 2;
  const UNKNOWN: Lookup = { kind: 'unknown' };

  /** Whether a change raced the fetch of this answer and could have undone it (a revocation, say). */
  const undone = (race: Race, key: ResolvedKey | null): boolean => (key ? subjects(key).some((s) => race.touched.has(s)) : race.keyEvent);

  async function fetchKey(hash: string, stale: Entry | undefined): Promise<Lookup> {
    const race: Race = { touched: new Set(), keyEvent: false, suspect: false };
    racing.add(race);
    try {
      const { key, version = 0 } = await source.resolveKey(hash);
      const t = now();
      const answer: Lookup = key ? { kind: 'known', key } : UNKNOWN;
      const entry: Entry = { key, fetchedAt: t, refreshAfter: t + halfFresh, answer, version, suspect: race.suspect };
      if (!undone(race, key)) store(hash, entry);
      return entry.answer;
    } catch (err) {
      if (!(err instanceof ControlPlaneUnavailable)) logger.error({ err }, 'key resolution failed');
      else logger.warn({ err: err.message }, 'key resolution: control plane unavailable');
      if (stale?.key && now() - stale.fetchedAt < settings.keyStaleMs) {
        stats.stale++;
        return stale.answer;
      }
      stats.unavailable++;
      return { kind: 'unavailable' };
    } finally {
      racing.delete(race);
    }
  }

  function fetchShared(hash: string, stale: Entry | undefined): Promise<Lookup> {
    let p = inflight.get(hash);
    if (!p) {
      const mine: Promise<Lookup> = fetchKey(hash, stale).finally(() => {
        if (inflight.get(hash) === mine) inflight.delete(hash);
      });
      inflight.set(hash, (p = mine));
    }
    return p;
  }

  function refreshInBackground(hash: string, e: Entry, t: number): void {
    if (inflight.has(hash)) return;
    e.refreshAfter = t + REFRESH_RETRY_MS;
    // A failed refresh leaves the entry as it was: still fresh, and the outage rule applies once it is not.
    void fetchShared(hash, e);
  }

  /** The answer without waiting, when the cache has a fresh one (refreshing it ahead of time if due). */
  function cached(hash: string): Lookup | undefined {
    const e = cache.get(hash);
    if (!e || e.suspect) return undefined;
    const t = now();
    const age = t - e.fetchedAt;
    if (!e.key) {
      if (age >= settings.keyNegativeMs) return undefined;
      stats.hit++;
      return e.answer;
    }
    if (age >= settings.keyFreshMs) return undefined;
    if (t >= e.refreshAfter) refreshInBackground(hash, e, t);
    stats.hit++;
    return e.answer;
  }

  return {
    cached,
    lookup(hash: string): Promise<Lookup> {
      const hit = cached(hash);
      if (hit) return Promise.resolve(hit);
      stats.miss++;
      return fetchShared(hash, cache.get(hash));
    },
    /** A change-feed hint: forget every entry the changed subject could affect. */
    invalidate(topic: ChangeTopic, subjectId: string): void {
      // A fetch already under way may carry the answer from before the change: later lookups must not share it,
      // and it is kept only if the change named none of its key's subjects.
      inflight.clear();
      for (const race of racing) {
        race.touched.add(`${topic}:${subjectId}`);
        if (topic === 'key') race.keyEvent = true;
      }
      // A key event may be a new key whose hash was cached as unknown.
      if (topic === 'key') for (const hash of [...negatives]) cache.delete(hash);
      const hashes = index.get(`${topic}:${subjectId}`);
      if (hashes) for (const hash of [...hashes]) cache.delete(hash);
    },
    markSuspect(scope: 'all' | 'inflight'): void {
      inflight.clear();
      for (const race of racing) race.suspect = true;
      if (scope === 'all') for (const e of cache.values()) e.suspect = true;
    },
    oldestVersion(): number | undefined {
      let oldest: number | undefined;
      for (const e of cache.values()) if (oldest === undefined || e.version < oldest) oldest = e.version;
      return oldest;
    },
    size: () => cache.size,
    stats,
  };
}
