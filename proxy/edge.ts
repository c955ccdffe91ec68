import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pool } from 'undici';
import type { NowMs } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import { AppError, toAppError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { isWellFormedSecret, sha256Hex } from '../shared/secrets.js';
import type { ResolvedKey } from '../shared/contract/keys.js';
import { allowedAliases, decideKey, decideModel } from './decide.js';
import { countTokensCall, modelList, outputCeiling, parseCall, upstreamCall } from './formats.js';
import { ClientLeft, LINGER_MIN_BYTES, lingerThenClose, readBody } from './request-body.js';
import { forward } from './forward.js';
import { ambiguousCredentials, presentedKey, upstreamHeaders } from './headers.js';
import type { HoldStore } from './holds.js';
import type { KeyCache, Lookup } from './key-cache.js';
import type { HeldCall, Metering } from './metering.js';
import type { EdgeCall, EdgeObserver } from './observe.js';
import { costMicros, estimateInputTokens } from './money.js';
import { rateLimitHeaders, type RateLimits } from './rate-limits.js';
import { estimateCountTokens } from './translate/count-tokens.js';
import { newRequestId } from './request-id.js';
import { unroutedCall } from './unrouted.js';
import { errorBody, type WireFormat } from './wire-errors.js';

export interface EdgeDeps {
  config: Config;
  logger: Logger;
  keys: KeyCache;
  limits: RateLimits;
  holds: HoldStore;
  metering: Metering;
  pool(origin: string): Pool;
  observe: EdgeObserver;
  now: NowMs;
}

type Route = { format: WireFormat; slug: string; action: 'call' | 'models' | 'count' };

const PATH = /^\/([^/]+)\/(anthropic\/)?v1\/(chat\/completions|messages|messages\/count_tokens|models)$/;

function route(path: string): Route | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  const format: WireFormat = m[2] ? 'messages' : 'chat';
  if (m[3] === 'models') return { format, slug: m[1]!, action: 'models' };
  if (m[3] === 'messages/count_tokens') return format === 'messages' ? { format, slug: m[1]!, action: 'count' } : undefined;
  if ((format === 'chat') !== (m[3] === 'chat/completions')) return undefined;
  return { format, slug: m[1]!, action: 'call' };
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function sendError(res: ServerResponse, format: WireFormat, err: AppError, headers: Record<string, string> = {}): void {
  const message = err.expose ? err.message : 'The proxy failed to handle this request.';
  send(res, err.status, errorBody(format, err.kind, message, err.code), { ...err.headers, ...headers });
}

/** The edge: one plain request handler for both formats, one decision for both (docs/design.md). */
export function createEdgeHandler(deps: EdgeDeps) {
  const { config, logger } = deps;
  const catalog = config.models;
  const settings = config.proxy;

  /**
   * The caller's key: from the cache at once when it is there (the usual
   * case, no promise), else a promise of the control plane's answer.
   */
  function lookupKey(req: IncomingMessage, format: WireFormat, call: EdgeCall): ResolvedKey | null | Promise<ResolvedKey | null> {
    if (ambiguousCredentials(req.headers, req.rawHeaders)) return null;
    const presented = presentedKey(req.headers, format === 'chat' ? 'authorization' : 'x-api-key');
    // Malformed keys never cost a lookup.
    if (!presented || !isWellFormedSecret(presented, 'apiKey')) return null;
    const hash = sha256Hex(presented);
    call.keyStartAt = performance.now();
    const hit = deps.keys.cached(hash);
    return hit ? keyOf(hit, call) : deps.keys.lookup(hash).then((found) => keyOf(found, call));
  }

  function keyOf(found: Lookup, call: EdgeCall): ResolvedKey | null {
    call.keyAt = performance.now();
    if (found.kind === 'unavailable') {
      throw new AppError('unavailable', 'The key could not be checked right now. Retry shortly.');
    }
    return found.kind === 'known' ? found.key : null;
  }

  async function listModels(req: IncomingMessage, res: ServerResponse, r: Route, call: EdgeCall): Promise<void> {
    const requestId = call.requestId;
    const verdict = decideKey(await lookupKey(req, r.format, call), r.slug, deps.now());
    if (!verdict.ok) throw verdict.error;
    send(res, 200, modelList(r.format, allowedAliases(verdict.key, catalog), catalog), { 'x-request-id': requestId });
  }

  /**
   * `messages/count_tokens`: the key and model are checked as for a call, but
   * nothing is generated, held or billed, and the key's rate limits are not
   * taken (clients such as Claude Code count before many turns). A Messages
   * provider counts; for a Chat-Completions-only one the proxy estimates.
   */
  async function countTokens(req: IncomingMessage, res: ServerResponse, r: Route, search: string, obs: EdgeCall): Promise<void> {
    const requestId = obs.requestId;
    const k = decideKey(await lookupKey(req, r.format, obs), r.slug, deps.now());
    if (!k.ok) throw k.error;
    const raw = await readBody(req, settings.maxBodyBytes);
    const call = parseCall(r.format, raw, req.headers, 'count');
    const verdict = decideModel(k.key, call.alias, catalog);
    if (!verdict.ok) throw verdict.error;
    const up = countTokensCall(call, verdict.model, verdict.provider);
    if (!up) {
      send(res, 200, JSON.stringify({ input_tokens: await estimateCountTokens(call, verdict.model) }), { 'x-request-id': requestId });
      return;
    }
    const outcome = await forward(
      {
        pool: deps.pool(up.origin),
        origin: up.origin,
        path: `${up.path}${search}`,
        headers: upstreamHeaders(req.headers, { header: up.authHeader, secret: verdict.provider.api_key ?? '' }, up.body.length, up.extraHeaders),
        body: up.body,
        format: up.format,
        dropUsageChunk: false,
        translate: undefined,
        extraHeaders: { 'x-request-id': requestId },
        headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
        idleTimeoutMs: settings.upstreamIdleTimeoutMs,
      },
      res,
    );
    if (outcome.kind === 'failed') sendError(res, r.format, outcome.error, { 'x-request-id': requestId });
  }

  async function modelCall(req: IncomingMessage, res: ServerResponse, r: Route, search: string, obs: EdgeCall): Promise<void> {
    const requestId = obs.requestId;
    const startedMs = performance.now();
    // The key before the body: a caller without a valid key never makes the proxy read (or buffer) what it sends.
    const looked = lookupKey(req, r.format, obs);
    const key = looked instanceof Promise ? await looked : looked;
    const k = decideKey(key, r.slug, deps.now());
    if (!k.ok) throw k.error;
    const resolved = k.key;
    obs.keyId = resolved.id;
    obs.workspaceId = resolved.workspace_id;
    const raw = await readBody(req, settings.maxBodyBytes);
    const call = parseCall(r.format, raw, req.headers);
    const verdict = decideModel(resolved, call.alias, catalog);
    if (!verdict.ok) throw verdict.error;
    const { model, provider } = verdict;
    obs.model = model;
    // Built before anything is held or counted: a call translation refuses costs nothing.
    const up = upstreamCall(r.format, call, model, provider, r.format === 'messages' ? search : '');

    const inputEstimate = estimateInputTokens(raw.length);
    // In process the limits answer at once; only Redis-backed limits are awaited.
    const admitted = deps.limits.admit(resolved.id, resolved.rpm, resolved.tpm, inputEstimate);
    const limit = admitted instanceof Promise ? await admitted : admitted;
    const limitHeaders = rateLimitHeaders(limit);
    // Every answer from here on carries the request id with the limit headers.
    limitHeaders['x-request-id'] = requestId;
    if (!limit.ok) {
      obs.detail = limit.which;
      const retryAfter = String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000)));
      throw new AppError('rate_limited', `Rate limit reached for ${limit.which} per minute on this key. Retry after ${retryAfter}s.`, {
        headers: { ...limitHeaders, 'retry-after': retryAfter },
      });
    }

    if (deps.metering.full()) {
      logger.error({ requestId }, 'settlement outbox full: refusing calls until the control plane takes usage again');
      throw new AppError('unavailable', 'Usage cannot be recorded right now. Retry shortly.', { headers: { ...limitHeaders, 'retry-after': '5' } });
    }
    const holdMicros = costMicros(model, inputEstimate, outputCeiling(call, model));
    let held;
    try {
      // In process the hold is decided at once; only the Redis store is awaited.
      const holding = deps.holds.hold(
        requestId,
        {
          workspaceId: resolved.workspace_id,
          balanceMicros: resolved.balance_micros,
          balanceVersion: resolved.balance_version,
          keyId: resolved.id,
          keyRemainingMicros: resolved.key_remaining_micros,
          keyVersion: resolved.key_version,
        },
        holdMicros,
      );
      held = holding instanceof Promise ? await holding : holding;
    } catch (err) {
      // Money checks fail closed when the hold store is unreachable (docs/proxy.md, Redis outage).
      logger.error({ err, requestId }, 'hold store unavailable');
      throw new AppError('unavailable', 'Spending limits cannot be checked right now. Retry shortly.', { headers: limitHeaders });
    }
    if (!held.ok) {
      obs.detail = held.reason;
      throw new AppError(
        'insufficient_funds',
        held.reason === 'balance'
          ? 'The workspace balance cannot cover this request (its worst-case cost). Add credits or lower max_tokens.'
          : "This key's remaining budget cannot cover this request (its worst-case cost). Lower max_tokens or raise the budget.",
        { headers: limitHeaders },
      );
    }

    const heldCall: HeldCall = {
      requestId,
      keyId: resolved.id,
      workspaceId: resolved.workspace_id,
      tpm: resolved.tpm,
      model,
      holdMicros,
      inputEstimate,
      tokensTaken: resolved.tpm === null ? 0 : Math.min(inputEstimate, resolved.tpm),
      keyBudget: resolved.key_remaining_micros !== null,
      format: r.format,
      startedMs,
    };
    obs.admittedAt = performance.now();
    obs.translated = up.translate !== undefined;
    obs.upstreamFormat = up.format;
    // From here on the hold is owed: it is settled or released on every path, a throw included.
    deps.metering.admitted(heldCall);
    let accounted = false;
    try {
      const headers = upstreamHeaders(req.headers, { header: up.authHeader, secret: provider.api_key ?? '' }, up.body.length, up.extraHeaders);
      deps.observe.upstream(obs, headers);
      const outcome = await forward(
        {
          pool: deps.pool(up.origin),
          origin: up.origin,
          path: up.path,
          headers,
          timing: obs,
          body: up.body,
          format: up.format,
          dropUsageChunk: up.dropUsageChunk,
          translate: up.translate,
          extraHeaders: limitHeaders,
          headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
          idleTimeoutMs: settings.upstreamIdleTimeoutMs,
        },
        res,
      );
      obs.upstreamEndAt = performance.now();
      obs.outcome = outcome.kind;

      switch (outcome.kind) {
        case 'failed':
          obs.error = outcome.error;
          deps.metering.release(heldCall, outcome.error.status);
          accounted = true;
          logger.warn({ requestId, err: (outcome.error.cause as Error | undefined)?.message }, 'upstream failed');
          sendError(res, r.format, outcome.error, limitHeaders);
          return;
        case 'upstream-error':
          deps.metering.release(heldCall, outcome.status);
          accounted = true;
          return;
        case 'complete': {
          const usage = outcome.tap.usage();
          if (obs.span) obs.finishReasons = outcome.tap.finishReasons();
          if (usage) settle(obs, heldCall, usage.inputTokens, usage.outputTokens);
          else {
            // An answer without usage is billed as if it used everything it was allowed.
            logger.warn({ requestId }, 'upstream answer carried no usage; billing the hold');
            settle(obs, heldCall, inputEstimate, outputCeiling(call, model));
          }
          accounted = true;
          return;
        }
        case 'cut': {
          const tap = outcome.tap;
          // The client went away (499, as nginx logs it) or the provider broke off mid-answer (502).
          settle(obs, heldCall, tap?.inputReported() ?? inputEstimate, tap?.outputSeen() ?? 0, outcome.by === 'client' ? 499 : 502);
          accounted = true;
          return;
        }
      }
    } finally {
      // A failure of the proxy's own after admission: nothing was billed, so the hold goes back now.
      if (!accounted) deps.metering.release(heldCall, 500);
    }
  }

  /** Bills the call and notes what was billed for the metrics and the access log. */
  function settle(obs: EdgeCall, held: HeldCall, inputTokens: number, outputTokens: number, status?: number): void {
    obs.costMicros = deps.metering.settle(held, inputTokens, outputTokens, status);
    obs.inputTokens = Math.max(1, inputTokens);
    obs.outputTokens = Math.max(0, outputTokens);
    obs.settledAt = performance.now();
  }

  // Calls in flight, so shutdown can wait for them and for the settlements they queue.
  let active = 0;
  let idleWaiters: (() => void)[] = [];
  const finished = () => {
    if (--active === 0 && idleWaiters.length) {
      for (const w of idleWaiters) w();
      idleWaiters = [];
    }
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = newRequestId(deps.now());
    const obs = deps.observe.begin(req, requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const search = q < 0 ? '' : url.slice(q);

    // Probes are neither counted nor logged.
    if (path === '/healthz') {
      send(res, req.method === 'GET' || req.method === 'HEAD' ? 200 : 405, '{"status":"ok"}', { 'x-request-id': requestId });
      return;
    }
    const r = route(path);
    if (!r) {
      const unrouted = unroutedCall(req.method, path, req.headers, config.edgeBaseUrl);
      obs.format = unrouted.format;
      sendError(res, unrouted.format, unrouted.error, { 'x-request-id': requestId });
      deps.observe.end(obs, res.statusCode);
      return;
    }
    const format: WireFormat = r.format;
    obs.format = format;
    obs.route = r.action;
    const method = r.action === 'models' ? 'GET' : 'POST';
    if (req.method !== method) {
      send(res, 405, errorBody(format, 'invalid_input', `Use ${method} on this path.`), { allow: method, 'x-request-id': requestId });
      deps.observe.end(obs, res.statusCode);
      return;
    }
    if (req.headers['content-length'] !== undefined && req.headers['transfer-encoding'] !== undefined) {
      sendError(res, format, new AppError('invalid_input', 'Content-Length and Transfer-Encoding must not both be sent.'), {
        'x-request-id': requestId,
        connection: 'close',
      });
      deps.observe.end(obs, res.statusCode);
      return;
    }
    active++;
    const work =
      r.action === 'models'
        ? listModels(req, res, r, obs)
        : r.action === 'count'
          ? countTokens(req, res, r, search, obs)
          : modelCall(req, res, r, search, obs);
    work
      .catch((thrown: unknown) => {
        if (thrown instanceof ClientLeft) {
          logger.info({ requestId }, 'client left before sending its whole body');
          return;
        }
        const err = toAppError(thrown);
        obs.error = err;
        if (!err.expose) logger.error({ err: thrown, requestId }, 'edge request failed');
        // A body refused, or never read because the call was refused first (a bad key), is not
        // read on: discard what is in flight (never buffered) so the answer is seen, then close.
        if (err.kind === 'too_large') lingerThenClose(req, Math.max(settings.maxBodyBytes, LINGER_MIN_BYTES));
        else if (!req.complete) lingerThenClose(req, LINGER_MIN_BYTES);
        const extra: Record<string, string> = { 'x-request-id': requestId };
        if (err.kind === 'too_large' || !req.complete) extra.connection = 'close';
        sendError(res, format, err, extra);
      })
      .then(() => deps.observe.end(obs, res.statusCode))
      .catch((err: unknown) => logger.error({ err, requestId }, 'recording the request failed'))
      .finally(finished);
  }

  return {
    handle,
    /** Resolves once no call is in flight (and every settlement they make is queued). */
    idle(): Promise<void> {
      if (active === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    /** Node's parser refused the request: answer in the format of its path when the request line can be read. */
    clientError: (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void => {
      if (!socket.writable || err.code === 'ECONNRESET') {
        socket.destroy();
        return;
      }
      const packet = err.rawPacket;
      const line = packet ? packet.toString('latin1', 0, Math.min(packet.length, 8192)).split('\r\n', 1)[0]! : '';
      const format: WireFormat = (line.split(' ')[1] ?? '').includes('/anthropic/') ? 'messages' : 'chat';
      const tooBig = err.code === 'HPE_HEADER_OVERFLOW';
      const body = errorBody(
        format,
        tooBig ? 'too_large' : 'invalid_input',
        tooBig ? 'The request headers are too large.' : 'The request is not valid HTTP/1.1.',
      );
      socket.end(
        `HTTP/1.1 ${tooBig ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\ncontent-type: application/json\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${newRequestId(deps.now())}\r\nconnection: close\r\n\r\n${body}`,
      );
    },
  };
}
