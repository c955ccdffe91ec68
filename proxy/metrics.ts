import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CALL_BUCKETS, FAST_BUCKETS } from '../shared/metrics.js';
import type { HoldOutcome, HoldStore } from './holds.js';

/**
 * The proxy's Prometheus metrics. Every label value comes from a closed set
 * (docs/operations.md lists them): the wire format, the edge route, the model
 * alias as named in the models file (anything else is `other`), its provider,
 * the status class, and a refusal reason from the error kinds. No label ever
 * holds a key, key id, token, workspace, user or prompt.
 */
/** Where the scrape-time gauges read from; filled in once the parts they read exist. */
export interface ProxyGaugeSources {
  keyCacheSize?: () => number;
  keyStats?: () => Record<string, number>;
  settlementDepth?: () => number;
  redisUp?: () => boolean;
}

export function createProxyMetrics(registry: Registry, sources: ProxyGaugeSources) {
  const registers = [registry];
  // The key cache counts in plain integers; the counter catches up on each scrape.
  const lookupsSeen: Record<string, number> = {};
  const callLabels = ['format', 'route', 'model', 'provider', 'status_class'] as const;
  const modelLabels = ['format', 'model', 'provider'] as const;
  return {
    requests: new Counter({ name: 'tollgate_proxy_requests_total', help: 'Edge requests answered', labelNames: callLabels, registers }),
    duration: new Histogram({
      name: 'tollgate_proxy_request_duration_seconds',
      help: 'Edge request duration, first byte in to last byte out',
      labelNames: callLabels,
      buckets: CALL_BUCKETS,
      registers,
    }),
    ttfb: new Histogram({
      name: 'tollgate_proxy_time_to_first_byte_seconds',
      help: "Request in to the provider's response head relayed to the client",
      labelNames: [...modelLabels, 'stream'],
      buckets: CALL_BUCKETS,
      registers,
    }),
    upstream: new Histogram({
      name: 'tollgate_proxy_upstream_duration_seconds',
      help: 'Upstream call, dispatch to end of the answer, by how it ended',
      labelNames: [...modelLabels, 'outcome'],
      buckets: CALL_BUCKETS,
      registers,
    }),
    tokens: new Counter({ name: 'tollgate_proxy_tokens_total', help: 'Tokens billed', labelNames: [...modelLabels, 'direction'], registers }),
    spend: new Counter({ name: 'tollgate_proxy_spend_micros_total', help: 'Cost billed, in micro-dollars', labelNames: modelLabels, registers }),
    refusals: new Counter({
      name: 'tollgate_proxy_refusals_total',
      help: 'Requests refused by the proxy itself (not the provider), by reason',
      labelNames: ['format', 'reason'],
      registers,
    }),
    keyLookups: new Counter({
      name: 'tollgate_proxy_key_cache_lookups_total',
      help: 'Key cache lookups: hit, miss (asked the control plane), stale (served past freshness while the control plane was unreachable), unavailable',
      labelNames: ['result'],
      registers,
      collect() {
        const stats = sources.keyStats?.() ?? {};
        for (const [result, n] of Object.entries(stats)) {
          this.labels(result).inc(n - (lookupsSeen[result] ?? 0));
          lookupsSeen[result] = n;
        }
      },
    }),
    keyCacheEntries: new Gauge({
      name: 'tollgate_proxy_key_cache_entries',
      help: 'Keys held in the cache',
      registers,
      collect() {
        this.set(sources.keyCacheSize?.() ?? 0);
      },
    }),
    invalidations: new Counter({
      name: 'tollgate_proxy_key_invalidations_total',
      help: 'Change events applied to the key cache, by how they arrived',
      labelNames: ['via'],
      registers,
    }),
    invalidationLag: new Histogram({
      name: 'tollgate_proxy_invalidation_lag_seconds',
      help: 'Change committed in the control plane to applied in this proxy (includes clock skew between hosts)',
      labelNames: ['via'],
      buckets: FAST_BUCKETS,
      registers,
    }),
    holdsOutstanding: new Gauge({ name: 'tollgate_proxy_holds_outstanding', help: "This proxy's holds taken and not yet released", registers }),
    settlementQueue: new Gauge({
      name: 'tollgate_proxy_settlement_queue_depth',
      help: 'Calls settled here and not yet recorded by the control plane',
      registers,
      collect() {
        this.set(sources.settlementDepth?.() ?? 0);
      },
    }),
    settlementLag: new Histogram({
      name: 'tollgate_proxy_settlement_lag_seconds',
      help: 'Call settled to its usage recorded in the ledger',
      buckets: FAST_BUCKETS,
      registers,
    }),
    controlPlaneUp: new Gauge({ name: 'tollgate_proxy_control_plane_up', help: '1 when the last call to the control plane succeeded', registers }),
    redisUp: new Gauge({
      name: 'tollgate_proxy_redis_up',
      help: '1 when Redis is connected (always 0 without REDIS_URL)',
      registers,
      collect() {
        this.set(sources.redisUp?.() ? 1 : 0);
      },
    }),
  };
}

export type ProxyMetrics = ReturnType<typeof createProxyMetrics>;

/** The hold store, counting this proxy's holds outstanding on the way through. */
export function countHolds(store: HoldStore, metrics: ProxyMetrics): HoldStore {
  const gauge = metrics.holdsOutstanding;
  const taken = (o: HoldOutcome): HoldOutcome => {
    if (o.ok) gauge.inc();
    return o;
  };
  const released = () => gauge.dec();
  return {
    hold: (requestId, snapshot, amount) => store.hold(requestId, snapshot, amount).then(taken),
    release: (requestId, ids, snapshot) => store.release(requestId, ids, snapshot).finally(released),
    extend: (requestId, ids) => store.extend(requestId, ids),
    close: () => store.close(),
  };
}
