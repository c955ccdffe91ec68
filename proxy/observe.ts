import type { IncomingMessage } from 'node:http';
import { defaultTextMapGetter, type TextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { AppError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { statusClass } from '../shared/metrics.js';
import type { ModelConfig } from '../shared/models.js';
import type { Tracing } from '../shared/tracing.js';
import { createSeriesCache, type ProxyMetrics, type SeriesCache } from './metrics.js';
import type { SettlementWatch } from './money/settlement-watch.js';
import type { WireFormat } from './call.js';
import { PIVOT, WIRE } from './wire/registry.js';

/**
 * What the edge learns about one request as it goes, as plain fields and
 * `performance.now()` stamps: filling it in costs next to nothing, and the
 * metrics, the access log and the spans are all made from it once, at the end.
 * Spans other than the request's own and the upstream call's (whose id must
 * go upstream in `traceparent`) are made afterwards from the stamps.
 */
export interface EdgeCall {
  readonly requestId: string;
  readonly startedAt: number;
  /** The request line's method and path (no query), for the access log: routed or not. */
  readonly method: string;
  readonly path: string;
  format: WireFormat;
  /** `call`, `embed`, `count`, `models`, `model`, `probe` or `unrouted`: a closed set, safe as a label. */
  route: string;
  /** Set only once the alias is found in the models file, so labels never carry a caller's text. */
  model: ModelConfig | undefined;
  keyId: string | undefined;
  workspaceId: string | undefined;
  translated: boolean;
  /** The provider's wire format: the client's, unless the call is translated. */
  upstreamFormat: WireFormat | undefined;
  /** What the translation dropped (header-safe names), empty when nothing was. */
  dropped: readonly string[];
  stream: boolean;
  keyStartAt: number;
  keyAt: number;
  admittedAt: number;
  upstreamAt: number;
  headAt: number;
  upstreamEndAt: number;
  /** `provider/upstream_model` whose answer the client got, and how many deployments were tried. */
  deployment: string | undefined;
  attempts: number;
  /** How the upstream call ended (`complete`, `cut`, `upstream-error`, `failed`). */
  outcome: string | undefined;
  /** The client left before its answer was over: logged and counted as 499 (client closed), not as what the socket last said. */
  clientClosed: boolean;
  settledAt: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  finishReasons: string[] | undefined;
  /** The refusal, when the proxy itself said no. */
  error: AppError | undefined;
  /** Which limit refused it (`requests`/`tokens`, `balance`/`budget`), to tell refusals of one kind apart. */
  detail: string | undefined;
  /** The output ceiling the call was lowered to because the money left did not cover its worst case. */
  outputLimit: number | undefined;
  span: Span | undefined;
  upstreamSpan: Span | undefined;
}

export interface EdgeObserver {
  begin(req: IncomingMessage, requestId: string): EdgeCall;
  /** Just before dispatch: stamps it and, when tracing, puts the upstream span's `traceparent` in `headers`. */
  /** `headers` are the provider request's flat name/value pairs; trace context is appended to them. */
  upstream(call: EdgeCall, headers: string[]): void;
  /** Once the answer is over, whatever it was. */
  end(call: EdgeCall, status: number): void;
  close(): Promise<void>;
}

/** Trace context onto undici's flat header array. */
const APPEND_HEADER: TextMapSetter<string[]> = {
  set(carrier, key, value) {
    carrier.push(key, value);
  },
};

export interface ObserverParts {
  metrics?: ProxyMetrics | undefined;
  /** The access log: one `info` line per request. */
  accessLog?: Logger | undefined;
  tracing?: Tracing | undefined;
  settlements?: SettlementWatch | undefined;
}

/** The longest path the access log keeps: an unrouted path is the caller's text, of any length. */
const PATH_LOGGED = 256;

/** A call's record before anything is known of it but its request line (exported for the step tests' fakes). */
export function newCall(requestId: string, req?: IncomingMessage): EdgeCall {
  const url = req?.url ?? '/';
  const q = url.indexOf('?');
  return {
    requestId,
    startedAt: performance.now(),
    method: req?.method ?? '',
    path: (q < 0 ? url : url.slice(0, q)).slice(0, PATH_LOGGED),
    format: PIVOT,
    route: 'unrouted',
    model: undefined,
    keyId: undefined,
    workspaceId: undefined,
    translated: false,
    upstreamFormat: undefined,
    dropped: [],
    stream: false,
    keyStartAt: 0,
    keyAt: 0,
    admittedAt: 0,
    upstreamAt: 0,
    headAt: 0,
    upstreamEndAt: 0,
    deployment: undefined,
    attempts: 0,
    outcome: undefined,
    clientClosed: false,
    settledAt: 0,
    inputTokens: 0,
    outputTokens: 0,
    costMicros: 0,
    finishReasons: undefined,
    error: undefined,
    detail: undefined,
    outputLimit: undefined,
    span: undefined,
    upstreamSpan: undefined,
  };
}

const ms = (from: number, to: number): number | undefined => (from && to ? Math.round((to - from) * 100) / 100 : undefined);

/** The refusal reason label: the error kind, and which limit when there are two. */
export function refusalReason(call: EdgeCall): string | undefined {
  if (!call.error) return undefined;
  return call.detail ? `${call.error.kind}_${call.detail}` : call.error.kind;
}

function recordMetrics(series: SeriesCache, call: EdgeCall, status: number, now: number): void {
  const format = call.format;
  const model = call.model?.alias ?? 'none';
  const provider = call.model?.provider ?? 'none';
  const c = series.call(format, call.route, model, provider, statusClass(status));
  c.requests.inc();
  c.duration.observe((now - call.startedAt) / 1000);
  if (call.error) series.refusal(format, refusalReason(call)!).inc();
  for (const name of call.dropped) series.dropped(format, name).inc();
  if (!call.upstreamAt && !call.settledAt) return;
  const m = series.model(format, model, provider);
  if (call.upstreamAt) {
    if (call.headAt) m.ttfb[call.stream ? 1 : 0].observe((call.headAt - call.startedAt) / 1000);
    series.upstream(m, format, model, provider, call.outcome ?? 'unknown').observe(((call.upstreamEndAt || now) - call.upstreamAt) / 1000);
  }
  if (call.settledAt) {
    m.input.inc(call.inputTokens);
    m.output.inc(call.outputTokens);
    m.spend.inc(call.costMicros);
  }
}

/**
 * The field a 400 refused: refusals of a body say it first (`messages.1.role: must be …`),
 * so the log names it without the rest of the message, which may quote the caller's values.
 */
export function refusedField(call: EdgeCall): string | undefined {
  if (call.error?.kind !== 'invalid_input') return undefined;
  return /^([A-Za-z_][\w.[\]-]*): /.exec(call.error.message)?.[1];
}

function writeAccessLog(log: Logger, call: EdgeCall, status: number, now: number): void {
  log.info(
    {
      requestId: call.requestId,
      method: call.method,
      path: call.path,
      workspace: call.workspaceId,
      // The key's id (not its secret), shortened: enough to find it in the console.
      key: call.keyId?.slice(0, 8),
      model: call.model?.alias,
      format: call.format,
      route: call.route,
      translated: call.translated,
      dropped: call.dropped.length ? call.dropped.join(',') : undefined,
      stream: call.stream,
      status,
      outcome: call.outcome,
      deployment: call.deployment,
      attempts: call.attempts || undefined,
      reason: refusalReason(call),
      field: refusedField(call),
      outputLimit: call.outputLimit,
      ms: ms(call.startedAt, now),
      ttfbMs: ms(call.startedAt, call.headAt),
      inputTokens: call.settledAt ? call.inputTokens : undefined,
      outputTokens: call.settledAt ? call.outputTokens : undefined,
      costMicros: call.settledAt ? call.costMicros : undefined,
    },
    'edge request',
  );
}

/** GenAI semantic conventions for the request's span. */
function finishSpans(t: Tracing, call: EdgeCall, status: number, now: number, settlements: SettlementWatch | undefined): void {
  const span = call.span!;
  const parent = trace.setSpan(ROOT_CONTEXT, span);
  const child = (name: string, from: number, to: number) => {
    if (from && to) t.tracer.startSpan(name, { startTime: from }, parent).end(to);
  };
  child('key lookup', call.keyStartAt, call.keyAt);
  child('admission', call.keyAt, call.admittedAt);
  if (call.upstreamSpan) {
    if (call.outcome === 'failed' || call.outcome === 'upstream-error') call.upstreamSpan.setStatus({ code: SpanStatusCode.ERROR });
    call.upstreamSpan.end(call.upstreamEndAt || now);
  }
  const model = call.model;
  span.updateName(model ? `chat ${model.alias}` : `${call.route} ${call.format}`);
  span.setAttributes({
    'gen_ai.operation.name': 'chat',
    'http.response.status_code': status,
    'tollgate.request_id': call.requestId,
    'tollgate.format': call.format,
    'tollgate.translated': call.translated,
  });
  if (model) {
    span.setAttributes({
      'gen_ai.system': WIRE[call.upstreamFormat ?? call.format].genAiSystem,
      'gen_ai.provider.name': model.provider,
      'gen_ai.request.model': model.alias,
      'gen_ai.response.model': model.upstream_model,
    });
  }
  if (call.finishReasons?.length) span.setAttribute('gen_ai.response.finish_reasons', call.finishReasons);
  if (call.settledAt) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': call.inputTokens,
      'gen_ai.usage.output_tokens': call.outputTokens,
      'tollgate.cost_micros': call.costMicros,
    });
  }
  if (call.error) span.setAttribute('error.type', refusalReason(call)!);
  if (status >= 500 || call.outcome === 'cut') span.setStatus({ code: SpanStatusCode.ERROR });
  if (call.settledAt && settlements) {
    // Ends when the control plane has recorded the usage (or at once when it already has).
    settlements.traceSettlement(call.requestId, t.tracer.startSpan('settlement', { startTime: call.settledAt }, parent));
  }
  span.end(now);
}

/** Makes the per-request observer from the parts that are switched on; with none, `end` does nothing. */
export function createEdgeObserver(parts: ObserverParts): EdgeObserver {
  const { metrics, accessLog, tracing, settlements } = parts;
  const series = metrics ? createSeriesCache(metrics) : undefined;
  const watchSettlement = metrics !== undefined || tracing !== undefined;
  return {
    begin(req, requestId) {
      const call = newCall(requestId, req);
      if (tracing) {
        const parent: Context = tracing.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
        call.span = tracing.tracer.startSpan('edge request', { kind: SpanKind.SERVER, startTime: call.startedAt }, parent);
      }
      return call;
    },
    upstream(call, headers) {
      call.upstreamAt = performance.now();
      if (call.span && tracing) {
        const parent = trace.setSpan(ROOT_CONTEXT, call.span);
        call.upstreamSpan = tracing.tracer.startSpan('upstream call', { kind: SpanKind.CLIENT, startTime: call.upstreamAt }, parent);
        if (call.model) {
          call.upstreamSpan.setAttributes({ 'gen_ai.provider.name': call.model.provider, 'gen_ai.request.model': call.model.upstream_model });
        }
        tracing.propagator.inject(trace.setSpan(ROOT_CONTEXT, call.upstreamSpan), headers, APPEND_HEADER);
      }
    },
    end(call, status) {
      const now = performance.now();
      if (series) recordMetrics(series, call, status, now);
      // The line's fields are gathered only when it is written (a proxy at LOG_LEVEL=warn writes none).
      if (accessLog?.isLevelEnabled('info')) writeAccessLog(accessLog, call, status, now);
      if (call.settledAt && watchSettlement) settlements?.watch(call.requestId, call.settledAt);
      if (tracing && call.span) finishSpans(tracing, call, status, now, settlements);
    },
    close: async () => {
      await tracing?.close();
    },
  };
}
