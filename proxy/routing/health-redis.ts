import type { Redis } from 'ioredis';
import type { NowMs } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { DeploymentHealth as ReportedHealth } from '../../shared/contract/deployments.js';
import { reportedState, type DeploymentHealth, type HealthSettings } from './health.js';

/*
 * Each deployment is one hash, `{prefix}:deployment:{id}`: `until` (epoch ms
 * it is out of rotation until), `failures` (in a row), `open` (the circuit),
 * `probe` (the half-open probe is in flight; for the console).
 * It expires on its own some cooldowns after the last failure, so a
 * deployment that stopped failing leaves nothing behind. The proxies' clocks
 * are assumed close (the same assumption the holds' fence makes).
 */

/** One round trip for all deployments of a call; a cooldown just over is claimed by one caller (the probe). */
const CHECK = `
local t = tonumber(ARGV[1]); local cool = tonumber(ARGV[2]); local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('HMGET', k, 'until', 'open')
  local u = tonumber(v[1] or '0') or 0
  if v[1] == false then out[i] = -1
  elseif u > t then out[i] = u
  elseif v[2] == '1' then redis.call('HSET', k, 'until', t + cool, 'probe', '1'); out[i] = 0
  else out[i] = 0 end
end
return out`;

const FAILED = `
local k = KEYS[1]; local t = tonumber(ARGV[1]); local ra = tonumber(ARGV[2]); local n = tonumber(ARGV[3]); local cool = tonumber(ARGV[4])
local f = redis.call('HINCRBY', k, 'failures', 1)
local u = tonumber(redis.call('HGET', k, 'until') or '0') or 0
if ra >= 0 then u = math.max(u, t + ra) end
if f >= n then redis.call('HSET', k, 'open', '1'); u = math.max(u, t + cool) end
redis.call('HSET', k, 'until', u, 'probe', '0')
redis.call('PEXPIRE', k, math.max(u - t, 0) + 10 * cool)
return f`;

const SUCCEEDED = `
local k = KEYS[1]; local t = tonumber(ARGV[1])
local v = redis.call('HMGET', k, 'until', 'open')
if v[1] == false then return 0 end
if v[2] == '1' or (tonumber(v[1]) or 0) <= t then redis.call('DEL', k) else redis.call('HSET', k, 'failures', 0) end
return 1`;

export function createRedisDeploymentHealth(redis: Redis, prefix: string, settings: HealthSettings, now: NowMs, logger: Logger): DeploymentHealth {
  const key = (id: string) => `${prefix}:deployment:${id}`;
  // Deployments that had state at their last check: only a success on one of those needs a write.
  const marked = new Set<string>();
  const warn = (what: string) => (err: unknown) => logger.warn({ err: (err as Error).message }, `deployment health: ${what} failed`);
  return {
    async check(ids) {
      try {
        const out = (await redis.eval(CHECK, ids.length, ...ids.map(key), now(), settings.cooldownMs)) as number[];
        return out.map((u, i) => {
          if (u === -1) {
            marked.delete(ids[i]!);
            return 0;
          }
          marked.add(ids[i]!);
          return u;
        });
      } catch (err) {
        // Redis down: every deployment is tried (failover still works call by call).
        warn('check')(err);
        return ids.map(() => 0);
      }
    },
    failed(id, _reason, retryAfterMs) {
      marked.add(id);
      redis.eval(FAILED, 1, key(id), now(), retryAfterMs ?? -1, settings.failures, settings.cooldownMs).catch(warn('failure record'));
    },
    succeeded(id) {
      if (!marked.delete(id)) return;
      redis.eval(SUCCEEDED, 1, key(id), now()).catch(warn('success record'));
    },
    async report(ids) {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hmget(key(id), 'until', 'failures', 'open', 'probe');
      const rows = (await pipeline.exec()) ?? [];
      const t = now();
      const out: ReportedHealth[] = [];
      ids.forEach((id, i) => {
        const [u, f, o, p] = (rows[i]?.[1] as (string | null)[] | undefined) ?? [];
        if (u === null || u === undefined) return;
        const r = reportedState(id, { until: Number(u), failures: Number(f ?? 0), open: o === '1', probing: p === '1' }, t);
        if (r) out.push(r);
      });
      return out;
    },
  };
}
