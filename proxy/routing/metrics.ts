import { Counter, Histogram, type Registry } from 'prom-client';
import { CALL_BUCKETS } from '../../shared/metrics.js';

/**
 * Per deployment (`provider/upstream_model`, from the models file: a closed
 * set): attempts and how they ended, failures by reason, calls that skipped
 * it while it was out of rotation, and how long each attempt took to its end
 * or to its failure.
 */
export function createRoutingMetrics(registry: Registry) {
  const registers = [registry];
  return {
    attempts: new Counter({
      name: 'tollgate_proxy_deployment_attempts_total',
      help: 'Calls sent to a deployment, by how the attempt ended',
      labelNames: ['deployment', 'outcome'],
      registers,
    }),
    failures: new Counter({
      name: 'tollgate_proxy_deployment_failures_total',
      help: 'Attempts that failed before the first byte reached the client (or broke after), by reason',
      labelNames: ['deployment', 'reason'],
      registers,
    }),
    skipped: new Counter({
      name: 'tollgate_proxy_deployment_cooldown_skips_total',
      help: 'Calls that skipped a deployment because it was cooling down or its circuit was open',
      labelNames: ['deployment'],
      registers,
    }),
    latency: new Histogram({
      name: 'tollgate_proxy_deployment_attempt_seconds',
      help: 'One attempt on a deployment, from dispatch to its end or failure',
      labelNames: ['deployment'],
      buckets: CALL_BUCKETS,
      registers,
    }),
  };
}
export type RoutingMetrics = ReturnType<typeof createRoutingMetrics>;
