import type { NowMs } from '../../shared/clock.js';
import type { DeploymentHealth as ReportedHealth, DeploymentStateName } from '../../shared/contract/deployments.js';

/** Why an attempt was left for the next deployment (a closed set: it is a metric label). */
export type FailureReason =
  | 'refused'
  | 'reset'
  | 'timeout'
  | 'ttfb'
  | 'first_event'
  | 'status_429'
  | 'status_500'
  | 'status_502'
  | 'status_503'
  | 'status_504'
  | 'status_529'
  | 'broken';

export interface HealthSettings {
  /** Failures in a row that open the circuit. */
  failures: number;
  /** How long an open circuit keeps the deployment out; then one probe goes through. */
  cooldownMs: number;
}

/**
 * Which deployments are out of rotation: told to wait by the provider
 * (`retry-after` on a 429/503), or with an open circuit after failures in a
 * row. An open circuit lets one call through once its cooldown is over (the
 * half-open probe); the probe's success closes it, its failure opens it
 * again. Per process here; `health-redis.ts` shares it across proxies.
 */
export interface DeploymentHealth {
  /**
   * For each deployment id, 0 when a call may go to it, else the epoch ms it
   * comes back. A deployment whose cooldown just ended is handed to one
   * caller (the probe) and reported out to the others meanwhile.
   */
  check(ids: readonly string[]): number[] | Promise<number[]>;
  failed(id: string, reason: FailureReason, retryAfterMs: number | undefined): void;
  succeeded(id: string): void;
  /**
   * The state of those of `ids` that are not plainly healthy (cooling, open,
   * half-open, or failures in a row below the threshold), for the console.
   */
  report(ids: readonly string[]): Promise<ReportedHealth[]>;
}

/** What the console is told of one deployment, from what the health store keeps. */
export function reportedState(
  id: string,
  s: { until: number; failures: number; open: boolean; probing: boolean },
  t: number,
): ReportedHealth | undefined {
  let state: DeploymentStateName = 'healthy';
  if (s.open) state = s.probing || s.until <= t ? 'half_open' : 'open';
  else if (s.until > t) state = 'cooling';
  if (state === 'healthy' && s.failures === 0) return undefined;
  const back = state === 'open' || state === 'cooling' ? s.until - t : 0;
  return { id, state, back_in_ms: Math.round(back), failures: s.failures };
}

interface State {
  failures: number;
  /** Out of rotation until then (epoch ms); 0 for in rotation. */
  until: number;
  /** The circuit is open: when `until` passes, one probe is let through. */
  open: boolean;
  /** That probe is in flight (for the console: half-open, not open). */
  probing: boolean;
}

export function createDeploymentHealth(settings: HealthSettings, now: NowMs): DeploymentHealth {
  const states = new Map<string, State>();
  return {
    check(ids) {
      const t = now();
      return ids.map((id) => {
        const s = states.get(id);
        if (!s) return 0;
        if (s.until > t) return s.until;
        if (s.open) {
          // Half-open: this caller is the probe; the others wait for its verdict (at most one cooldown).
          s.until = t + settings.cooldownMs;
          s.probing = true;
          return 0;
        }
        return 0;
      });
    },
    failed(id, _reason, retryAfterMs) {
      const t = now();
      const s = states.get(id) ?? { failures: 0, until: 0, open: false, probing: false };
      s.failures++;
      s.probing = false;
      if (retryAfterMs !== undefined) s.until = Math.max(s.until, t + retryAfterMs);
      if (s.failures >= settings.failures) {
        s.open = true;
        s.until = Math.max(s.until, t + settings.cooldownMs);
      }
      states.set(id, s);
    },
    succeeded(id) {
      const s = states.get(id);
      if (!s) return;
      // A closed circuit keeps a provider's retry-after that another call brought back meanwhile.
      if (s.open || s.until <= now()) states.delete(id);
      else s.failures = 0;
    },
    report(ids) {
      const t = now();
      const out: ReportedHealth[] = [];
      for (const id of ids) {
        const s = states.get(id);
        const r = s && reportedState(id, s, t);
        if (r) out.push(r);
      }
      return Promise.resolve(out);
    },
  };
}

/** `retry-after` in seconds or as an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
