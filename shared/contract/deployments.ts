import { z } from 'zod';

/**
 * How often each proxy tells the control plane the state of the deployments
 * it routes to (cooldowns and circuits live in the proxies, or in their
 * Redis). A report older than `DEPLOYMENT_REPORT_FRESH_MS` is not shown: its
 * proxy stopped or cannot reach the control plane.
 */
export const DEPLOYMENT_REPORT_EVERY_MS = 10_000;
export const DEPLOYMENT_REPORT_FRESH_MS = 3 * DEPLOYMENT_REPORT_EVERY_MS + 5_000;

/**
 * `healthy`: in rotation (`failures` may count failures in a row below the
 * circuit's threshold). `cooling`: out of rotation until the time a
 * provider's `retry-after` gave. `open`: the circuit is open until then.
 * `half_open`: the circuit's cooldown is over; the next call is the probe,
 * or the probe is in flight.
 */
export const DEPLOYMENT_STATES = ['healthy', 'cooling', 'open', 'half_open'] as const;
export type DeploymentStateName = (typeof DEPLOYMENT_STATES)[number];

/** One deployment's state at one proxy. `back_in_ms` is relative, so the two halves' clocks need not agree. */
export const deploymentHealthSchema = z.strictObject({
  /** `provider/upstream_model`, as in the models file. */
  id: z.string().min(1).max(400),
  state: z.enum(DEPLOYMENT_STATES),
  /** Until it is back in rotation (cooling, open), from the report's sending; 0 otherwise. */
  back_in_ms: z
    .number()
    .int()
    .nonnegative()
    .max(7 * 24 * 3_600_000),
  failures: z.number().int().nonnegative().max(1_000_000_000),
});
export type DeploymentHealth = z.infer<typeof deploymentHealthSchema>;

/**
 * `POST /internal/deployments/health` body, every `DEPLOYMENT_REPORT_EVERY_MS`:
 * the deployments that are not plainly healthy (an absent one is healthy with
 * no failures). Answered 204.
 */
export const deploymentReportSchema = z.strictObject({
  /** Names the proxy process; the control plane keeps the latest report of each. */
  proxy_id: z.string().regex(/^[\w.:-]{1,200}$/, 'letters, digits and _.:- only, at most 200'),
  deployments: z.array(deploymentHealthSchema).max(10_000),
});
export type DeploymentReport = z.infer<typeof deploymentReportSchema>;
