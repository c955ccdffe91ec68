/**
 * Key cache child: one process per size so its memory figures are its own.
 * Drives the proxy's own key cache module (proxy/key-cache.ts) with a source
 * that answers at once, so what is timed is the cache, not a network.
 *
 *   node --expose-gc --import tsx bench/scenarios/key-cache-child.ts '{"keys":1000,"bound":null,"lookups":100000}'
 */
import { createHash, randomUUID } from 'node:crypto';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import type { ResolvedKey } from '../../shared/contract/keys.js';
import { createKeyCache } from '../../proxy/key-cache.js';

export interface KeyCacheSpec {
  keys: number;
  /** Cache bound; null = the shipped default (PROXY_KEY_CACHE_SIZE). */
  bound: number | null;
  lookups: number;
}

export interface KeyCacheResult {
  keys: number;
  bound: number;
  /** Entries held after the run: must not exceed the bound. */
  size: number;
  fillPerSecond: number;
  lookupsPerSecond: number;
  hitRate: number;
  rssBaseBytes: number;
  rssBytes: number;
  heapBaseBytes: number;
  heapBytes: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as KeyCacheSpec;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const config = loadConfig({ LOG_LEVEL: 'silent' }, 'all');
const bound = spec.bound ?? config.proxy.keyCacheSize;
const settings = { ...config.proxy, keyCacheSize: bound };

// Key hashes live in one buffer (32 bytes each), so the test data itself barely shows in RSS.
const digests = Buffer.allocUnsafe(spec.keys * 32);
for (let i = 0; i < spec.keys; i++)
  createHash('sha256')
    .update(`tg-bench-key-${i}`)
    .digest()
    .copy(digests, i * 32);
const hashOf = (i: number) => digests.toString('hex', i * 32, i * 32 + 32);

const workspaceId = randomUUID();
const teamId = randomUUID();
const orgId = randomUUID();
let fetches = 0;
const source = {
  async resolveKey(): Promise<{ key: ResolvedKey }> {
    fetches++;
    return {
      key: {
        id: randomUUID(),
        org_id: orgId,
        workspace_id: workspaceId,
        workspace_slug: 'bench',
        team_id: teamId,
        owner_user_id: null,
        revoked: false,
        expires_at: null,
        rpm: 1000,
        tpm: 100000,
        models: ['tg/bench', 'tg/bench-paced'],
        key_remaining_micros: 1_000_000_000,
        key_version: 1,
        balance_micros: 1_000_000_000_000,
        balance_version: 1,
      },
    };
  },
};

gc();
const rssBaseBytes = process.memoryUsage().rss;
const heapBaseBytes = process.memoryUsage().heapUsed;
const cache = createKeyCache(source, settings, createLogger('silent', 'bench'));

let t0 = process.hrtime.bigint();
for (let i = 0; i < spec.keys; i++) await cache.lookup(hashOf(i));
const fillPerSecond = spec.keys / (Number(process.hrtime.bigint() - t0) / 1e9);

// Uniform random picks over every key: beyond the bound, most are misses that evict.
let x = 0x9e3779b9;
const next = () => {
  // xorshift32: cheap, and uniform enough over millions of keys.
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
};
const fetchesBefore = fetches;
t0 = process.hrtime.bigint();
for (let i = 0; i < spec.lookups; i++) await cache.lookup(hashOf(next() % spec.keys));
const lookupsPerSecond = spec.lookups / (Number(process.hrtime.bigint() - t0) / 1e9);
const hitRate = 1 - (fetches - fetchesBefore) / spec.lookups;

gc();
const mem = process.memoryUsage();
const result: KeyCacheResult = {
  keys: spec.keys,
  bound,
  size: cache.size(),
  fillPerSecond,
  lookupsPerSecond,
  hitRate,
  rssBaseBytes,
  rssBytes: mem.rss,
  heapBaseBytes,
  heapBytes: mem.heapUsed,
};
process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
