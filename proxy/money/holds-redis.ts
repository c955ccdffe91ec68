import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { NowMs } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { HoldOutcome, HoldStore, LiveHold, MoneySnapshot } from './holds.js';

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

/*
 * The epoch: a hash {id, started, fence} that exists as long as this Redis has
 * kept its data. A Redis restarted empty has none, and every proxy notices.
 * Codes: 4 no epoch, 5 another epoch than the caller's, 6 fenced until the
 * other proxies have put their live holds back, 3 an account that must be
 * seeded from the control plane before it can admit anything.
 */
const EPOCH_CHECK = `
local function epoch(e, want, now, young)
  local v = redis.call('HMGET', e, 'id', 'started', 'fence')
  if not v[1] then return 4 end
  if v[1] ~= want then return 5 end
  if now < tonumber(v[3]) then return 6 end
  if now - tonumber(v[2]) < young then return -1 end
  return 0
end
`;

// KEYS: wsM wsZ wsA keyM keyZ keyA epoch; ARGV: now ttl amount rid wsBase wsVer hasKey keyBase keyVer epochId youngMs floor
// Answers 0 when all of `amount` was held, minus what was held when only the floor fitted (docs/proxy.md), else a refusal code.
const HOLD = `${COMMON}${EPOCH_CHECK}
local now, ttl, amount, rid = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local hasKey = ARGV[7] == '1'
local ep = epoch(KEYS[7], ARGV[10], now, tonumber(ARGV[11]))
if ep > 0 then return ep end
-- In a young epoch an account without a base lost it with Redis's data: a
-- proxy's cached snapshot may predate spend whose holds went with it, so only
-- the control plane's own figures may found it.
if ep == -1 and ((not redis.call('HGET', KEYS[1], 'base')) or (hasKey and not redis.call('HGET', KEYS[4], 'base'))) then
  return 3
end
purge(KEYS[1], KEYS[2], KEYS[3], now)
adopt(KEYS[1], ARGV[5], ARGV[6])
-- At least one micro-dollar: an account at zero or below admits nothing.
local asked = amount
local need = math.max(1, math.min(amount, tonumber(ARGV[12])))
local left = available(KEYS[1])
if left < need then return 1 end
if hasKey then
  purge(KEYS[4], KEYS[5], KEYS[6], now)
  adopt(KEYS[4], ARGV[8], ARGV[9])
  local k = available(KEYS[4])
  if k < need then return 2 end
  if k < left then left = k end
end
-- shareOf in holds.ts: half of what is left, never below the floor.
if left < amount then amount = math.max(need, math.floor(left / 2)) end
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
if amount < asked then return -amount end
return 0
`;

// KEYS: epoch; ARGV: newId now fenceMs. Starts an epoch if there is none; answers the current id.
const BEGIN_EPOCH = `
if redis.call('HSETNX', KEYS[1], 'id', ARGV[1]) == 1 then
  local now = tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'started', now, 'fence', now + tonumber(ARGV[3]))
end
local v = redis.call('HMGET', KEYS[1], 'id', 'fence')
return {v[1], v[2]}
`;

// KEYS as HOLD (epoch last); ARGV: epochId now ttl, then rid amount hasKey for each hold.
// Unconditional: these holds are owed already. One already present is left alone.
const REASSERT = `${COMMON}
local cur = redis.call('HGET', KEYS[7], 'id')
if cur ~= ARGV[1] then return 5 end
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local function put(m, z, a, rid, amount)
  if redis.call('HEXISTS', a, rid) == 1 then return end
  redis.call('HINCRBY', m, 'held', amount)
  redis.call('ZADD', z, now + ttl, rid)
  redis.call('HSET', a, rid, amount)
  touch(m, z, a, ttl * 2)
end
local i = 4
while i <= #ARGV do
  put(KEYS[1], KEYS[2], KEYS[3], ARGV[i], tonumber(ARGV[i + 1]))
  if ARGV[i + 2] == '1' then put(KEYS[4], KEYS[5], KEYS[6], ARGV[i], tonumber(ARGV[i + 1])) end
  i = i + 3
end
return 0
`;

// KEYS: wsM keyM; ARGV: wsBase wsVer hasKey keyBase keyVer ttl. The control plane's own figures.
const SEED = `${COMMON}
adopt(KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]) * 2)
if ARGV[3] == '1' then
  adopt(KEYS[2], ARGV[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[6]) * 2)
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

// KEYS as HOLD; ARGV: rid amount. A call ended: its hold becomes what it cost,
// on both accounts in one step; a hold already released stays released.
const RESIZE = `
local rid, amount = ARGV[1], tonumber(ARGV[2])
local function resize(m, a)
  local cur = redis.call('HGET', a, rid)
  if cur then
    redis.call('HINCRBY', m, 'held', amount - tonumber(cur))
    redis.call('HSET', a, rid, amount)
  end
end
resize(KEYS[1], KEYS[3])
resize(KEYS[4], KEYS[6])
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
  tgBeginEpoch(...args: (string | number)[]): Promise<[string, string]>;
  tgReassert(...args: (string | number)[]): Promise<number>;
  tgSeed(...args: (string | number)[]): Promise<number>;
  tgRelease(...args: (string | number)[]): Promise<number>;
  tgExtend(...args: (string | number)[]): Promise<number>;
  tgResize(...args: (string | number)[]): Promise<number>;
}

export interface RedisHoldOptions {
  prefix: string;
  ttlMs: number;
  /** After Redis lost its data, no hold is admitted for this long: every proxy puts its live holds back first. */
  fenceMs: number;
  /** Every hold this proxy knows to be owed (calls in flight, unacknowledged settlements). */
  live(): LiveHold[];
  /** The control plane's current figures for an account that Redis lost. */
  authoritative(workspaceId: string, keyId: string): Promise<MoneySnapshot>;
  logger: Logger;
  /** The proxy's clock (default Date.now). */
  now?: NowMs;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/** The Lua scripts as commands on this connection. */
function defineHoldCommands(redis: Redis): HoldCommands {
  redis.defineCommand('tgHold', { numberOfKeys: 7, lua: HOLD });
  redis.defineCommand('tgRelease', { numberOfKeys: 6, lua: RELEASE });
  redis.defineCommand('tgExtend', { numberOfKeys: 6, lua: EXTEND });
  redis.defineCommand('tgResize', { numberOfKeys: 6, lua: RESIZE });
  redis.defineCommand('tgBeginEpoch', { numberOfKeys: 1, lua: BEGIN_EPOCH });
  redis.defineCommand('tgReassert', { numberOfKeys: 7, lua: REASSERT });
  redis.defineCommand('tgSeed', { numberOfKeys: 2, lua: SEED });
  return redis as unknown as HoldCommands;
}

/** Live holds grouped by their workspace and key: one reassert script per pair of accounts. */
function byAccount(live: LiveHold[]): Iterable<LiveHold[]> {
  const groups = new Map<string, LiveHold[]>();
  for (const h of live) {
    const k = `${h.workspaceId} ${h.keyId}`;
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(h);
  }
  return groups.values();
}

/**
 * Holds shared by all proxies on one Redis. Errors propagate: the caller
 * fails closed. Surviving Redis losing its data (docs/proxy.md, "Redis
 * restarted empty"): each proxy remembers the epoch it works in; when the
 * epoch is gone or changed, the proxy puts every hold it knows back before it
 * admits anything, the first to notice opens a new epoch fenced for `fenceMs`
 * (longer than any live proxy takes to notice), and an account Redis lost is
 * founded again only on the control plane's own figures.
 */
export function createRedisHoldStore(redis: Redis, options: RedisHoldOptions): HoldStore & { start(): Promise<void> } {
  const st: RedisHolds = {
    redis,
    options,
    commands: defineHoldCommands(redis),
    now: options.now ?? Date.now,
    epochKey: `${options.prefix}:epoch`,
    epoch: '',
    joining: undefined,
    timer: undefined,
  };
  const { ttlMs } = options;
  return {
    start: () => startHolds(st),
    hold: (requestId, s, amount, floor) => takeHold(st, requestId, s, amount, floor),
    async release(requestId, ids, s) {
      await st.commands.tgRelease(
        ...accountKeys(st, ids.workspaceId, ids.keyId),
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
    async resize(requestId, ids, amount) {
      await st.commands.tgResize(...accountKeys(st, ids.workspaceId, ids.keyId), requestId, amount);
    },
    async extend(requestId, ids) {
      await st.commands.tgExtend(...accountKeys(st, ids.workspaceId, ids.keyId), requestId, st.now(), ttlMs);
    },
    async reassert() {
      // Live holds come from options.live(), put back whenever the epoch changes; a start-up replay joins the epoch.
      await rejoin(st);
    },
    async close() {
      if (st.timer) clearInterval(st.timer);
    },
  };
}

/** One store's state, handed to the helpers below. */
interface RedisHolds {
  redis: Redis;
  options: RedisHoldOptions;
  commands: HoldCommands;
  now: NowMs;
  epochKey: string;
  /** The epoch this proxy works in ('' before it joined one). */
  epoch: string;
  /** A join under way: every caller that finds the epoch changed waits for the same one. */
  joining: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** The workspace's and the key's account keys (money, holds by expiry, hold amounts), in the scripts' order. */
function accountKeys(st: RedisHolds, workspaceId: string, keyId: string): string[] {
  const ws = `${st.options.prefix}:acct:ws:${workspaceId}`;
  const key = `${st.options.prefix}:acct:key:${keyId}`;
  return [`${ws}:m`, `${ws}:z`, `${ws}:a`, `${key}:m`, `${key}:z`, `${key}:a`];
}

async function startHolds(st: RedisHolds): Promise<void> {
  const { redis, epochKey, options } = st;
  await rejoin(st);
  // Each proxy looks for a lost epoch at a quarter of the fence, and at once when Redis reconnects.
  st.timer = setInterval(() => void checkEpoch(st).catch(() => undefined), Math.max(50, Math.floor(options.fenceMs / 4)));
  st.timer.unref();
  redis.on('ready', () => void checkEpoch(st).catch(() => undefined));
  // A brand-new epoch (first start, or Redis just lost its data) admits nothing until its fence ends.
  const fence = Number(await redis.hget(epochKey, 'fence'));
  if (fence > st.now()) await sleep(fence - st.now());
}

/** Puts every live hold back under the current epoch (starting one if Redis has none). */
async function joinEpoch(st: RedisHolds): Promise<void> {
  const { commands, epochKey, options, now } = st;
  for (;;) {
    const [id] = await commands.tgBeginEpoch(epochKey, randomUUID(), now(), options.fenceMs);
    let moved = false;
    for (const list of byAccount(options.live())) {
      const args: (string | number)[] = [...accountKeys(st, list[0]!.workspaceId, list[0]!.keyId), epochKey, id, now(), options.ttlMs];
      for (const h of list) args.push(h.requestId, h.amountMicros, h.keyBudget ? '1' : '0');
      if ((await commands.tgReassert(...args)) === 5) moved = true;
    }
    if (moved) continue;
    if (st.epoch !== id && st.epoch !== '')
      options.logger.warn({ holds: options.live().length }, 'Redis lost its holds: this proxy put its live holds back');
    st.epoch = id;
    return;
  }
}

function rejoin(st: RedisHolds): Promise<void> {
  st.joining ??= joinEpoch(st).finally(() => (st.joining = undefined));
  return st.joining;
}

async function checkEpoch(st: RedisHolds): Promise<void> {
  const id = await st.redis.hget(st.epochKey, 'id');
  if (id !== st.epoch) await rejoin(st);
}

/** The hold script, retried while Redis is being rebuilt (a new epoch, its fence, an account founded again). */
async function takeHold(st: RedisHolds, requestId: string, s: MoneySnapshot, amount: number, floor: number | undefined): Promise<HoldOutcome> {
  const { commands, epochKey, options, now } = st;
  const { ttlMs } = options;
  for (let attempt = 0; attempt < 8; attempt++) {
    const r = await commands.tgHold(
      ...accountKeys(st, s.workspaceId, s.keyId),
      epochKey,
      now(),
      ttlMs,
      amount,
      requestId,
      s.balanceMicros,
      s.balanceVersion,
      s.keyRemainingMicros === null ? '0' : '1',
      s.keyRemainingMicros ?? 0,
      s.keyVersion,
      st.epoch,
      ttlMs * 2,
      floor ?? amount,
    );
    if (r === 0) return { ok: true };
    if (r < 0) return { ok: true, lowered: -r };
    if (r === 1) return { ok: false, reason: 'balance' };
    if (r === 2) return { ok: false, reason: 'budget' };
    if (r === 4 || r === 5) await rejoin(st);
    else if (r === 6) {
      const fence = Number(await st.redis.hget(epochKey, 'fence'));
      await sleep(Math.min(options.fenceMs, Math.max(10, fence - now())));
    } else if (r === 3) await seedAccounts(st, s.workspaceId, s.keyId);
  }
  throw new Error('hold store still rebuilding after Redis lost its data');
}

/** Accounts Redis lost are founded again only on the control plane's own figures. */
async function seedAccounts(st: RedisHolds, workspaceId: string, keyId: string): Promise<void> {
  const fresh = await st.options.authoritative(workspaceId, keyId);
  const keys = accountKeys(st, workspaceId, keyId);
  await st.commands.tgSeed(
    keys[0]!,
    keys[3]!,
    fresh.balanceMicros,
    fresh.balanceVersion,
    fresh.keyRemainingMicros === null ? '0' : '1',
    fresh.keyRemainingMicros ?? 0,
    fresh.keyVersion,
    st.options.ttlMs,
  );
}
