import type { Redis } from 'ioredis';
import type { NowMs } from '../shared/clock.js';
import type { HoldStore, MoneySnapshot } from './holds.js';

/*
 * The same accounting as the memory store, shared by every proxy through
 * Redis. Each account is three keys: a hash {base, ver, held}, a sorted set
 * of live holds scored by expiry, and a hash of their amounts. Scripts run
 * atomically, so concurrent holds from several proxies serialize.
 */
const COMMON = `
local function purge(m, z, a, now)
  local expired = redis.call('ZRANGEBYSCORE', z, '-inf', now)
  for _, r in ipairs(expired) do
    local amt = tonumber(redis.call('HGET', a, r) or '0')
    redis.call('HINCRBY', m, 'held', -amt)
    redis.call('HDEL', a, r)
    redis.call('ZREM', z, r)
  end
end
local function adopt(m, base, ver)
  local cur = redis.call('HGET', m, 'ver')
  if (not cur) or tonumber(cur) < tonumber(ver) then
    redis.call('HSET', m, 'base', base, 'ver', ver)
  end
end
local function available(m)
  local v = redis.call('HMGET', m, 'base', 'held')
  return tonumber(v[1] or '0') - tonumber(v[2] or '0')
end
-- An idle account lapses after twice the hold TTL: by then none of its holds
-- is alive and no usage has settled into it, so any caller's snapshot is as
-- new as the one it loses.
local function touch(m, z, a, keep)
  redis.call('PEXPIRE', m, keep)
  redis.call('PEXPIRE', z, keep)
  redis.call('PEXPIRE', a, keep)
end
local function drop(m, z, a, rid)
  local amt = redis.call('HGET', a, rid)
  if amt then
    redis.call('HINCRBY', m, 'held', -tonumber(amt))
    redis.call('HDEL', a, rid)
    redis.call('ZREM', z, rid)
  end
end
`;

// KEYS: wsM wsZ wsA keyM keyZ keyA; ARGV: now ttl amount rid wsBase wsVer hasKey keyBase keyVer
const HOLD = `${COMMON}
local now, ttl, amount, rid = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
purge(KEYS[1], KEYS[2], KEYS[3], now)
adopt(KEYS[1], ARGV[5], ARGV[6])
if available(KEYS[1]) < amount then return 1 end
local hasKey = ARGV[7] == '1'
if hasKey then
  purge(KEYS[4], KEYS[5], KEYS[6], now)
  adopt(KEYS[4], ARGV[8], ARGV[9])
  if available(KEYS[4]) < amount then return 2 end
end
redis.call('HINCRBY', KEYS[1], 'held', amount)
redis.call('ZADD', KEYS[2], now + ttl, rid)
redis.call('HSET', KEYS[3], rid, amount)
touch(KEYS[1], KEYS[2], KEYS[3], ttl * 2)
if hasKey then
  redis.call('HINCRBY', KEYS[4], 'held', amount)
  redis.call('ZADD', KEYS[5], now + ttl, rid)
  redis.call('HSET', KEYS[6], rid, amount)
  touch(KEYS[4], KEYS[5], KEYS[6], ttl * 2)
end
return 0
`;

// KEYS as HOLD; ARGV: rid hasSnapshot wsBase wsVer hasKeyBudget keyBase keyVer ttl
const RELEASE = `${COMMON}
local rid = ARGV[1]
drop(KEYS[1], KEYS[2], KEYS[3], rid)
drop(KEYS[4], KEYS[5], KEYS[6], rid)
if ARGV[2] == '1' then
  adopt(KEYS[1], ARGV[3], ARGV[4])
  touch(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[8]) * 2)
  if ARGV[5] == '1' then
    adopt(KEYS[4], ARGV[6], ARGV[7])
    touch(KEYS[4], KEYS[5], KEYS[6], tonumber(ARGV[8]) * 2)
  end
end
return 0
`;

// KEYS as HOLD; ARGV: rid now ttl
const EXTEND = `${COMMON}
local rid, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('ZSCORE', KEYS[2], rid) then
  redis.call('ZADD', KEYS[2], now + ttl, rid)
  touch(KEYS[1], KEYS[2], KEYS[3], ttl * 2)
end
if redis.call('ZSCORE', KEYS[5], rid) then
  redis.call('ZADD', KEYS[5], now + ttl, rid)
  touch(KEYS[4], KEYS[5], KEYS[6], ttl * 2)
end
return 0
`;

interface HoldCommands {
  tgHold(...args: (string | number)[]): Promise<number>;
  tgRelease(...args: (string | number)[]): Promise<number>;
  tgExtend(...args: (string | number)[]): Promise<number>;
}

/** Holds shared by all proxies on one Redis. Errors propagate: the caller fails closed. */
export function createRedisHoldStore(redis: Redis, prefix: string, ttlMs: number, now: NowMs = Date.now): HoldStore {
  redis.defineCommand('tgHold', { numberOfKeys: 6, lua: HOLD });
  redis.defineCommand('tgRelease', { numberOfKeys: 6, lua: RELEASE });
  redis.defineCommand('tgExtend', { numberOfKeys: 6, lua: EXTEND });
  const commands = redis as unknown as HoldCommands;
  const keys = (workspaceId: string, keyId: string): string[] => {
    const ws = `${prefix}:acct:ws:${workspaceId}`;
    const key = `${prefix}:acct:key:${keyId}`;
    return [`${ws}:m`, `${ws}:z`, `${ws}:a`, `${key}:m`, `${key}:z`, `${key}:a`];
  };
  return {
    async hold(requestId, s: MoneySnapshot, amount) {
      const r = await commands.tgHold(
        ...keys(s.workspaceId, s.keyId),
        now(),
        ttlMs,
        amount,
        requestId,
        s.balanceMicros,
        s.balanceVersion,
        s.keyRemainingMicros === null ? '0' : '1',
        s.keyRemainingMicros ?? 0,
        s.keyVersion,
      );
      if (r === 1) return { ok: false, reason: 'balance' };
      if (r === 2) return { ok: false, reason: 'budget' };
      return { ok: true };
    },
    async release(requestId, ids, s) {
      await commands.tgRelease(
        ...keys(ids.workspaceId, ids.keyId),
        requestId,
        s ? '1' : '0',
        s?.balanceMicros ?? 0,
        s?.balanceVersion ?? 0,
        s && s.keyRemainingMicros !== null ? '1' : '0',
        s?.keyRemainingMicros ?? 0,
        s?.keyVersion ?? 0,
        ttlMs,
      );
    },
    async extend(requestId, ids) {
      await commands.tgExtend(...keys(ids.workspaceId, ids.keyId), requestId, now(), ttlMs);
    },
    async close() {},
  };
}
