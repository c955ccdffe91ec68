import type { NowMs } from '../../shared/clock.js';

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
  /** Each deployment's state: when it comes back (0: in rotation) and its failures in a row. */
  snapshot(ids: readonly string[]): Promise<DeploymentState[]>;
}

export interface DeploymentState {
  id: string;
  until: number;
  failures: number;
}

interface State {
  failures: number;
  /** Out of rotation until then (epoch ms); 0 for in rotation. */
  until: number;
  /** The circuit is open: when `until` passes, one probe is let through. */
  open: boolean;
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
          return 0;
        }
        return 0;
      });
    },
    failed(id, _reason, retryAfterMs) {
      const t = now();
      const s = states.get(id) ?? { failures: 0, until: 0, open: false };
      s.failures++;
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
    snapshot(ids) {
      const t = now();
      return Promise.resolve(
        ids.map((id) => {
          const s = states.get(id);
          return { id, until: s && s.until > t ? s.until : 0, failures: s?.failures ?? 0 };
        }),
      );
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
