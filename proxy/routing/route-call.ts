import { AppError } from '../../shared/errors.js';
import type { ModelCatalog, ModelConfig } from '../../shared/models.js';
import type { ForwardOutcome } from '../forward.js';
import type { Affinity } from './affinity.js';
import type { Balancer } from './balance.js';
import { deploymentsOf, type DeploymentRef } from './deployments.js';
import { retryableStatus } from './first-byte.js';
import type { DeploymentHealth, FailureReason } from './health.js';
import type { RoutingMetrics } from './metrics.js';

/** What routing is built from: one of each per proxy process. */
export interface Routing {
  balancer: Balancer;
  affinity: Affinity;
  health: DeploymentHealth;
  metrics: RoutingMetrics | undefined;
  now: () => number;
}

export interface RoutedCall {
  catalog: ModelCatalog;
  /** The alias called, then the fallbacks the key may use (deployments.ts `chainOf`). */
  chain: readonly ModelConfig[];
  /** The session the call belongs to (affinity.ts `sessionOf`). */
  session: string | undefined;
  stream: boolean;
  /** Whether the client is still there to be answered. */
  clientGone(): boolean;
}

/**
 * One attempt: the call sent to this deployment, translated for its
 * provider. `failover` says another deployment could still take the call.
 * An AppError means the call cannot be put in this provider's format: that
 * deployment is passed over.
 */
export type Attempt = (d: DeploymentRef, failover: boolean) => Promise<ForwardOutcome | AppError>;

export interface Routed {
  outcome: ForwardOutcome;
  /** The deployment whose answer the client got (undefined when none answered). */
  served: DeploymentRef | undefined;
  attempts: number;
}

/** Why a connection-level failure happened, from undici's error code. */
function failureOf(error: AppError, stream: boolean): FailureReason {
  const code = (error.cause as { code?: string } | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return stream ? 'ttfb' : 'timeout';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  return 'reset';
}

/** Every deployment out of rotation and no fallback left: 503 until the soonest comes back. */
function allCooling(soonest: number, now: number): AppError {
  const seconds = Math.max(1, Math.ceil((soonest - now) / 1000));
  return new AppError('unavailable', 'Every deployment of this model is cooling down. Retry after the time given.', {
    headers: { 'retry-after': String(seconds) },
  });
}

/** A retryable failure with nothing left to try: the provider's answer was not kept, so the proxy says it. */
function exhausted(reason: FailureReason, retryAfterMs: number | undefined): AppError {
  const headers: Record<string, string> = retryAfterMs === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
  return new AppError('unavailable', `Every deployment of this model failed (last: ${reason}).`, { headers });
}

/** The order of one alias's deployments for this call: the balancer's, with the session's own (`pinned`) first while it is healthy. */
function orderOf(routing: Routing, model: ModelConfig, pinned: number | undefined): number[] {
  const order = routing.balancer.order(model);
  if (pinned === undefined || pinned === order[0] || !(pinned >= 0 && pinned < model.deployments.length)) return order;
  return [pinned, ...order.filter((i) => i !== pinned)];
}

function record(routing: Routing, d: DeploymentRef, outcome: ForwardOutcome, reason: FailureReason | undefined, startedAt: number): void {
  const m = routing.metrics;
  if (!m) return;
  m.attempts.labels(d.id, outcome.kind).inc();
  if (reason) m.failures.labels(d.id, reason).inc();
  m.latency.labels(d.id).observe((performance.now() - startedAt) / 1000);
}

/** What an attempt's outcome means for its deployment's health; the failure reason when it failed. */
function judge(routing: Routing, d: DeploymentRef, o: ForwardOutcome, stream: boolean): FailureReason | undefined {
  let reason: FailureReason | undefined;
  let after: number | undefined;
  if (o.kind === 'retry') [reason, after] = [o.reason, o.retryAfterMs];
  else if (o.kind === 'failed') reason = failureOf(o.error, stream);
  else if (o.kind === 'upstream-error' && retryableStatus(o.status)) [reason, after] = [`status_${o.status}` as FailureReason, o.retryAfterMs];
  else if ((o.kind === 'cut' && o.by === 'upstream') || (o.kind === 'abandoned' && o.ended === 'broken')) reason = 'broken';
  if (reason) routing.health.failed(d.id, reason, after);
  else if (o.kind === 'complete' || (o.kind === 'abandoned' && o.ended === 'complete')) routing.health.succeeded(d.id);
  return reason;
}

/**
 * Sends a call to the alias's deployments, then its fallbacks', until one
 * answers: a failure before the first byte reached the client moves on to
 * the next; anything the client has begun to receive, and every client error
 * (4xx but 429), is final. Deployments out of rotation are skipped without
 * a try. All of it inside the one call and its one hold.
 */
export async function routeCall(call: RoutedCall, routing: Routing, attempt: Attempt): Promise<Routed> {
  let attempts = 0;
  let soonest = Infinity;
  let last: { outcome: ForwardOutcome; reason: FailureReason | undefined; after: number | undefined } | undefined;
  let refused: AppError | undefined;
  for (let a = 0; a < call.chain.length; a++) {
    const model = call.chain[a]!;
    const all = deploymentsOf(model, call.catalog);
    // The session's deployment, read before the pick (from Redis when affinity is shared: one round trip).
    // Only the primary alias is pinned, and only when it has a choice of deployments to pin.
    const session = a === 0 && all.length > 1 ? call.session : undefined;
    let pinned = session !== undefined ? routing.affinity.get(model.alias, session) : undefined;
    if (pinned instanceof Promise) pinned = await pinned;
    const order = orderOf(routing, model, pinned);
    const ran = routing.health.check(order.map((i) => all[i]!.id));
    const until = ran instanceof Promise ? await ran : ran;
    const open = order.filter((_, k) => until[k] === 0);
    order.forEach((i, k) => {
      if (until[k]! > 0) {
        soonest = Math.min(soonest, until[k]!);
        routing.metrics?.skipped.labels(all[i]!.id).inc();
      }
    });
    for (let k = 0; k < open.length; k++) {
      const d = all[open[k]!]!;
      const failover = k < open.length - 1 || a < call.chain.length - 1;
      const startedAt = performance.now();
      const o = await attempt(d, failover);
      if (o instanceof AppError) {
        refused ??= o;
        continue;
      }
      attempts++;
      const reason = judge(routing, d, o, call.stream);
      record(routing, d, o, reason, startedAt);
      if (o.kind === 'complete' && session !== undefined) routing.affinity.set(model.alias, session, d.index);
      // Nobody is left to serve once the client has gone: no further attempt is made (or billed).
      const movesOn = !call.clientGone() && (o.kind === 'retry' || (o.kind === 'failed' && failover));
      if (!movesOn) return { outcome: o, served: o.kind === 'failed' ? undefined : d, attempts };
      last = { outcome: o, reason, after: o.kind === 'retry' ? o.retryAfterMs : undefined };
    }
  }
  if (last) {
    const error = last.outcome.kind === 'failed' ? last.outcome.error : exhausted(last.reason!, last.after);
    return { outcome: { kind: 'failed', error }, served: undefined, attempts };
  }
  if (refused) return { outcome: { kind: 'failed', error: refused }, served: undefined, attempts };
  return { outcome: { kind: 'failed', error: allCooling(soonest, routing.now()) }, served: undefined, attempts };
}
