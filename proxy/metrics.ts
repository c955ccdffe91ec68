import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from '../shared/fast-metrics.js';
import { CALL_BUCKETS, FAST_BUCKETS } from '../shared/metrics.js';

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
  /** Holds this proxy owes: admitted and not yet released, or settled and not yet acknowledged. */
  holdsOutstanding?: () => number;
  redisUp?: () => boolean;
  /** Calls read on after their client left (abandoned.ts). */
  abandoned?: () => { running: number; ended: Readonly<Record<string, number>> };
  /** Responses WebSockets open (edge/websocket/). */
  webSockets?: () => number;
}

/** The proxy's metric families: the hot ones as fast families (a series resolved once per label set), the rest prom-client's. */
export interface ProxyMetrics {
  requests: FastCounter;
  duration: FastHistogram;
  ttfb: FastHistogram;
  upstream: FastHistogram;
  tokens: FastCounter;
  spend: FastCounter;
  refusals: FastCounter;
  /** What translations dropped, by client format and name. */
  dropped: FastCounter;
  keyLookups: Counter<'result'>;
  keyCacheEntries: Gauge;
  invalidations: Counter<'via'>;
  invalidationLag: Histogram<'via'>;
  keyCacheClears: Counter<'reason'>;
  holdsOutstanding: Gauge;
  settlementQueue: Gauge;
  settlementLag: Histogram;
  controlPlaneUp: Gauge;
  redisUp: Gauge;
  abandonedReads: Gauge;
  abandonedEnded: Counter<'ended'>;
  /** Frames of the Responses WebSocket, by what they were: a call, a prewarm answered here, or refused before any call. */
  webSocketFrames: Counter<'kind'>;
  webSocketsOpen: Gauge;
}

export function createProxyMetrics(registry: Registry, sources: ProxyGaugeSources): ProxyMetrics {
  const registers = [registry];
  // The key cache counts in plain integers; the counter catches up on each scrape.
  const lookupsSeen: Record<string, number> = {};
  const callLabels = ['format', 'route', 'model', 'provider', 'status_class'] as const;
  const modelLabels = ['format', 'model', 'provider'] as const;
  return {
    requests: new FastCounter(registry, { name: 'tollgate_proxy_requests_total', help: 'Edge requests answered', labelNames: callLabels }),
    duration: new FastHistogram(registry, {
      name: 'tollgate_proxy_request_duration_seconds',
      help: 'Edge request duration, first byte in to last byte out',
      labelNames: callLabels,
      buckets: CALL_BUCKETS,
    }),
    ttfb: new FastHistogram(registry, {
      name: 'tollgate_proxy_time_to_first_byte_seconds',
      help: "Request in to the provider's response head relayed to the client",
      labelNames: [...modelLabels, 'stream'],
      buckets: CALL_BUCKETS,
    }),
    upstream: new FastHistogram(registry, {
      name: 'tollgate_proxy_upstream_duration_seconds',
      help: 'Upstream call, dispatch to end of the answer, by how it ended',
      labelNames: [...modelLabels, 'outcome'],
      buckets: CALL_BUCKETS,
    }),
    tokens: new FastCounter(registry, { name: 'tollgate_proxy_tokens_total', help: 'Tokens billed', labelNames: [...modelLabels, 'direction'] }),
    spend: new FastCounter(registry, { name: 'tollgate_proxy_spend_micros_total', help: 'Cost billed, in micro-dollars', labelNames: modelLabels }),
    refusals: new FastCounter(registry, {
      name: 'tollgate_proxy_refusals_total',
      help: 'Requests answered with an error of the proxy itself (refusals, provider unreachable or slow), by reason',
      labelNames: ['format', 'reason'],
    }),
    dropped: new FastCounter(registry, {
      name: 'tollgate_proxy_dropped_total',
      help: 'Fields, tools or parts a translation dropped because the provider cannot honour them, by client format and name',
      labelNames: ['format', 'name'],
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
    ...abandonedMetrics(registers, sources),
    ...webSocketMetrics(registers, sources),
    keyCacheClears: new Counter({
      name: 'tollgate_proxy_key_cache_clears_total',
      help: 'Times every cached key answer was marked for refresh because the change feed could not say what changed: feed_backwards, page_full',
      labelNames: ['reason'],
      registers,
    }),
    holdsOutstanding: new Gauge({
      name: 'tollgate_proxy_holds_outstanding',
      help: "This proxy's holds taken and not yet released",
      registers,
      collect() {
        this.set(sources.holdsOutstanding?.() ?? 0);
      },
    }),
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

/** The series one kind of request lands in, resolved once per label set. */
export interface CallSeries {
  requests: CounterSeries;
  duration: HistogramSeries;
}

/** The series of one model on one format. */
export interface ModelSeries {
  /** Not streamed, streamed. */
  ttfb: [HistogramSeries, HistogramSeries];
  upstream: Map<string, HistogramSeries>;
  input: CounterSeries;
  output: CounterSeries;
  spend: CounterSeries;
}

/** Distinct (format, dropped name) series kept before the rest are counted as `other`. */
const DROPPED_NAMES = 500;

/** Per-request lookups of the hot metrics: one key and one map read per kind of request. */
export interface SeriesCache {
  call(format: string, route: string, model: string, provider: string, statusClass: string): CallSeries;
  model(format: string, model: string, provider: string): ModelSeries;
  refusal(format: string, reason: string): CounterSeries;
  dropped(format: string, name: string): CounterSeries;
  /** The upstream-duration series of one outcome, kept on the model's series. */
  upstream(s: ModelSeries, format: string, model: string, provider: string, outcome: string): HistogramSeries;
}

export function createSeriesCache(m: ProxyMetrics): SeriesCache {
  const calls = new Map<string, CallSeries>();
  const models = new Map<string, ModelSeries>();
  const droppedSeries = new Map<string, CounterSeries>();
  return {
    call(format: string, route: string, model: string, provider: string, statusClass: string): CallSeries {
      const key = `${format} ${route} ${model} ${provider} ${statusClass}`;
      let s = calls.get(key);
      if (!s) {
        s = {
          requests: m.requests.series(format, route, model, provider, statusClass),
          duration: m.duration.series(format, route, model, provider, statusClass),
        };
        calls.set(key, s);
      }
      return s;
    },
    model(format: string, model: string, provider: string): ModelSeries {
      const key = `${format} ${model} ${provider}`;
      let s = models.get(key);
      if (!s) {
        s = {
          ttfb: [m.ttfb.series(format, model, provider, 'false'), m.ttfb.series(format, model, provider, 'true')],
          upstream: new Map(),
          input: m.tokens.series(format, model, provider, 'input'),
          output: m.tokens.series(format, model, provider, 'output'),
          spend: m.spend.series(format, model, provider),
        };
        models.set(key, s);
      }
      return s;
    },
    refusal: (format: string, reason: string): CounterSeries => m.refusals.series(format, reason),
    /** A client may name unknown fields without end: past DROPPED_NAMES distinct names, the rest count as `other`. */
    dropped(format: string, name: string): CounterSeries {
      const key = `${format} ${name}`;
      let s = droppedSeries.get(key);
      if (!s) {
        if (droppedSeries.size >= DROPPED_NAMES) return m.dropped.series(format, 'other');
        s = m.dropped.series(format, name);
        droppedSeries.set(key, s);
      }
      return s;
    },
    upstream(s: ModelSeries, format: string, model: string, provider: string, outcome: string): HistogramSeries {
      let h = s.upstream.get(outcome);
      if (!h) {
        h = m.upstream.series(format, model, provider, outcome);
        s.upstream.set(outcome, h);
      }
      return h;
    },
  };
}

/** The reads of calls whose client left (abandoned.ts): running now, and each by how it ended, read at scrape time. */
function abandonedMetrics(registers: Registry[], sources: ProxyGaugeSources): Pick<ProxyMetrics, 'abandonedReads' | 'abandonedEnded'> {
  const seen: Record<string, number> = {};
  return {
    abandonedReads: new Gauge({
      name: 'tollgate_proxy_abandoned_reads',
      help: 'Calls whose client left, read on now (unrelayed) to bill what the provider reports',
      registers,
      collect() {
        this.set(sources.abandoned?.().running ?? 0);
      },
    }),
    abandonedEnded: new Counter({
      name: 'tollgate_proxy_abandoned_reads_total',
      help: 'Calls whose client left after the provider had the request, by how the read on ended: complete, error, broken, timeout, over_limit',
      labelNames: ['ended'],
      registers,
      collect() {
        for (const [ended, n] of Object.entries(sources.abandoned?.().ended ?? {})) {
          this.labels(ended).inc(n - (seen[ended] ?? 0));
          seen[ended] = n;
        }
      },
    }),
  };
}

function webSocketMetrics(registers: Registry[], sources: ProxyGaugeSources): Pick<ProxyMetrics, 'webSocketFrames' | 'webSocketsOpen'> {
  return {
    webSocketFrames: new Counter({
      name: 'tollgate_proxy_websocket_frames_total',
      help: 'Frames received on Responses WebSockets: call, prewarm (answered by the proxy, nothing billed), refused',
      labelNames: ['kind'],
      registers,
    }),
    webSocketsOpen: new Gauge({
      name: 'tollgate_proxy_websockets_open',
      help: 'Responses WebSockets open',
      registers,
      collect() {
        this.set(sources.webSockets?.() ?? 0);
      },
    }),
  };
}
