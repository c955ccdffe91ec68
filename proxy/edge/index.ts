import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, toAppError } from '../../shared/errors.js';
import { errorBody } from '../wire/errors.js';
import type { EdgeCall } from '../observe.js';
import { overHttp2 } from '../http2-compat.js';
import { ClientLeft, LINGER_MIN_BYTES, lingerThenClose } from '../request-body.js';
import { createRequestIds, newRequestId } from '../request-id.js';
import { stepsByAction, type Steps } from './actions.js';
import { send, sendCallError, sendError } from './answer.js';
import { observeStep } from './observe-steps.js';
import { countRefusal } from './refusal.js';
import { formatOfPath, isBaseProbe, route } from './route.js';
import { unroutedCall } from './unrouted.js';
import { newCallState, type Action, type CallState, type EdgeDeps, type Route, type StepOutcome } from './steps/step.js';

export type { EdgeDeps } from './steps/step.js';

/** The edge as runtime.ts drives it. */
export interface EdgeHandler {
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Resolves once no call is in flight (and every settlement they make is queued). */
  idle(): Promise<void>;
  /** Node's parser refused the request: answer in the format of its path when the request line can be read. */
  clientError: (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => void;
}

/** After each step, at one place: its observation, then its refusal if it refused. */
function stepped(name: string, s: CallState, refused: StepOutcome): void {
  observeStep(name, s);
  if (refused) throw refused;
}

/**
 * Runs `steps` from `i` on, synchronously while each step answers at once:
 * undefined when all did (a refusal is thrown), else the promise of the
 * rest, resumed when the step that had to wait is done. No async function
 * and no promise per step: a call whose key is cached and whose limits and
 * hold answer in process makes one promise between its body's end and the
 * upstream dispatch (the body read's).
 */
function runSteps(steps: Steps, i: number, s: CallState, deps: EdgeDeps): Promise<void> | undefined {
  for (; i < steps.length; i++) {
    const [name, step] = steps[i]!;
    const ran = step(s, deps);
    if (ran instanceof Promise) {
      const next = i + 1;
      return ran.then((refused) => {
        stepped(name, s, refused);
        return runSteps(steps, next, s, deps);
      });
    }
    stepped(name, s, ran);
  }
  return undefined;
}

/**
 * A routed request, its action's steps in one run (actions.ts); undefined
 * when it finished without waiting. From the hold on the money is owed: a
 * failure of the proxy's own after it (nothing was billed) hands the hold
 * back, on every path, a throw included.
 */
function runAction(deps: EdgeDeps, steps: Steps, req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall): Promise<void> | undefined {
  const s = newCallState(req, res, r, obs);
  let rest: Promise<void> | undefined;
  try {
    rest = runSteps(steps, 0, s, deps);
  } catch (err) {
    countRefusal(s, deps, err);
    throw err;
  } finally {
    if (!rest) releaseIfOwed(s, deps);
  }
  return rest?.then(
    () => releaseIfOwed(s, deps),
    (err: unknown) => {
      releaseIfOwed(s, deps);
      countRefusal(s, deps, err);
      throw err;
    },
  );
}

function releaseIfOwed(s: CallState, deps: EdgeDeps): void {
  if (s.held && !s.accounted) deps.metering.release(s.held, 500);
}

/** A request the edge answers before any step: bad method, or both Content-Length and Transfer-Encoding. */
function refusedRequest(req: IncomingMessage, res: ServerResponse, r: Route, requestId: string): boolean {
  const method = r.action === 'models' || r.action === 'model' ? 'GET' : 'POST';
  if (req.method !== method) {
    send(res, 405, errorBody(r.format, 'invalid_input', `Use ${method} on this path.`), { allow: method, 'x-request-id': requestId });
    return true;
  }
  if (req.headers['content-length'] !== undefined && req.headers['transfer-encoding'] !== undefined) {
    sendCallError(res, r, new AppError('invalid_input', 'Content-Length and Transfer-Encoding must not both be sent.'), {
      'x-request-id': requestId,
      connection: 'close',
    });
    return true;
  }
  return false;
}

/** The edge: one plain request handler for every wire format, one decision for all (docs/design.md). */
export function createEdgeHandler(deps: EdgeDeps): EdgeHandler {
  const { logger } = deps;
  const settings = deps.config.proxy;
  const requestIds = createRequestIds();
  const steps: Record<Action, Steps> = stepsByAction();

  // Calls in flight, so shutdown can wait for them and for the settlements they queue.
  let active = 0;
  let idleWaiters: (() => void)[] = [];
  const finished = () => {
    if (--active === 0 && idleWaiters.length) {
      for (const w of idleWaiters) w();
      idleWaiters = [];
    }
  };

  /** The answer to whatever a call threw: in its format, the connection closed when its body was not read whole. */
  function failed(req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall, thrown: unknown): void {
    const requestId = obs.requestId;
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
    // HTTP/2 has no `connection` header (Node drops it with a warning): the connection's other calls go on (lingerThenClose).
    if ((err.kind === 'too_large' || !req.complete) && !overHttp2(req)) extra.connection = 'close';
    sendCallError(res, r, err, extra);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = requestIds(deps.now());
    const obs = deps.observe.begin(req, requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    // The query string is never sent on to a provider (docs/security.md); it routes only a Gemini stream's `alt=sse`.
    const path = q < 0 ? url : url.slice(0, q);

    // Probes are neither counted nor logged.
    if (path === '/healthz') {
      send(res, req.method === 'GET' || req.method === 'HEAD' ? 200 : 405, '{"status":"ok"}', { 'x-request-id': requestId });
      return;
    }
    // A HEAD on a format's base is a client's connectivity probe: no key, nothing to say but 200.
    if (isBaseProbe(req.method, path)) {
      obs.route = 'probe';
      send(res, 200, '', { 'x-request-id': requestId });
      deps.observe.end(obs, res.statusCode);
      return;
    }
    const r = route(path, q < 0 ? '' : url.slice(q + 1));
    if (!r) {
      const unrouted = unroutedCall(req.method, path, req.headers, deps.config.edgeBaseUrl);
      obs.format = unrouted.format;
      sendError(res, unrouted.format, unrouted.error, { 'x-request-id': requestId });
      deps.observe.end(obs, res.statusCode);
      return;
    }
    obs.format = r.format;
    obs.route = r.action;
    if (refusedRequest(req, res, r, requestId)) {
      deps.observe.end(obs, res.statusCode);
      return;
    }
    active++;
    let pending: Promise<void> | undefined;
    try {
      pending = runAction(deps, steps[r.action], req, res, r, obs);
    } catch (thrown) {
      // Refused before waiting on anything (a bad key): answered once the parser has handed over
      // what it read with the head, as when every call was async, so a small body that came whole
      // keeps its connection open.
      queueMicrotask(() => answered(req, res, r, obs, true, thrown));
      return;
    }
    if (pending)
      pending.then(
        () => answered(req, res, r, obs, false, undefined),
        (thrown: unknown) => answered(req, res, r, obs, true, thrown),
      );
    else answered(req, res, r, obs, false, undefined);
  }

  /** A routed request from its end to its record: its failure answered, if it failed; then it is no longer in flight. */
  function answered(req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall, threw: boolean, thrown: unknown): void {
    try {
      if (threw) failed(req, res, r, obs, thrown);
      deps.observe.end(obs, obs.clientClosed ? 499 : res.statusCode);
    } catch (err) {
      logger.error({ err, requestId: obs.requestId }, 'recording the request failed');
    } finally {
      finished();
    }
  }

  return {
    handle,
    idle(): Promise<void> {
      if (active === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    clientError: (err, socket): void => {
      if (!socket.writable || err.code === 'ECONNRESET') {
        socket.destroy();
        return;
      }
      const packet = err.rawPacket;
      const line = packet ? packet.toString('latin1', 0, Math.min(packet.length, 8192)).split('\r\n', 1)[0]! : '';
      const format = formatOfPath(line.split(' ')[1] ?? '');
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
