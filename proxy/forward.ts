import type { ServerResponse } from 'node:http';
import type { Dispatcher, Pool } from 'undici';
import { AppError } from '../shared/errors.js';
import { downstreamHeaders } from './headers.js';
import type { AnswerTranslator } from './translate/index.js';
import { createUsageChunkFilter, createUsageTap, type UsageTap } from './usage-tap.js';
import type { WireFormat } from './wire-errors.js';

export type ForwardOutcome =
  /** Nothing reached the client yet: the caller answers with this error. */
  | { kind: 'failed'; error: AppError }
  /** The provider's own 3xx/4xx/5xx went through unchanged. */
  | { kind: 'upstream-error'; status: number }
  | { kind: 'complete'; tap: UsageTap }
  /** Ended early after the client disconnected or the upstream broke mid-answer. */
  | { kind: 'cut'; tap: UsageTap | undefined; headersSent: boolean; by: 'client' | 'upstream' };

export interface ForwardRequest {
  pool: Pool;
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The format the provider answers in (what the usage tap reads). */
  format: WireFormat;
  dropUsageChunk: boolean;
  /** Set when the provider lacks the client's format: the answer is rewritten into the client's. */
  translate: AnswerTranslator | undefined;
  /** Added to the provider's headers (x-request-id, x-ratelimit-*). */
  extraHeaders: Record<string, string>;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /** Stamped when the answer's head goes to the client (time to first byte). */
  timing?: { headAt: number; stream: boolean };
}

function upstreamFailure(err: Error): AppError {
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new AppError('upstream_timeout', 'The model provider did not answer in time.', { cause: err });
  }
  return new AppError('upstream_unreachable', 'The model provider could not be reached.', { cause: err });
}

/** Made only when a client does leave: an Error's stack trace is not free, and most calls never need one. */
function clientGone(): Error {
  return new Error('client disconnected');
}

/** The end of a translated answer: a whole body (success or error) rewritten, or a stream's closing events. */
function translated(t: AnswerTranslator, whole: Buffer[] | undefined, errorStatus: number): Buffer {
  if (!whole) return t.end();
  const body = whole.length === 1 ? whole[0]! : Buffer.concat(whole);
  return errorStatus ? t.error(errorStatus, body) : t.json(body);
}

/**
 * Sends one call upstream through undici's dispatch and relays the answer as
 * it arrives: bytes unchanged (but for the usage chunk the proxy asked for),
 * paused while the client's socket is full, aborted when the client leaves.
 * Redirects are never followed: dispatch has no redirect handling.
 */
export function forward(req: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
  return new Promise((resolve) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let headersSent = false;
    let errorAnswer = false;
    let tap: UsageTap | undefined;
    let filter: ReturnType<typeof createUsageChunkFilter> | undefined;
    const translate = req.translate;
    let eventStream = false;
    /** A translated whole answer (JSON or error) is rewritten only once complete. */
    let whole: Buffer[] | undefined;

    const done = (o: ForwardOutcome) => {
      if (settled) return;
      settled = true;
      res.off('close', onClientClose);
      resolve(o);
    };
    function onClientClose() {
      if (res.writableFinished) return;
      if (controller && !controller.aborted) controller.abort(clientGone());
      done({ kind: 'cut', tap, headersSent, by: 'client' });
    }
    res.on('close', onClientClose);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (res.destroyed) c.abort(clientGone());
      },
      onResponseStart(c, status, headers) {
        controller = c;
        if (status < 200) return;
        // Redirects are relayed, never followed, and, like error answers, not billed.
        errorAnswer = status >= 300;
        const type = headers['content-type'];
        eventStream = typeof type === 'string' && type.includes('text/event-stream');
        if (!errorAnswer) {
          tap = createUsageTap(req.format, eventStream);
          if (eventStream && req.dropUsageChunk) filter = createUsageChunkFilter();
        }
        if (translate && (errorAnswer || !eventStream)) whole = [];
        res.writeHead(status, downstreamHeaders(headers, filter !== undefined || translate !== undefined, req.extraHeaders));
        headersSent = true;
        if (req.timing) {
          req.timing.headAt = performance.now();
          req.timing.stream = eventStream;
        }
        // A stream's head goes out at once, so its client sees the status before the first event.
        // A whole answer's head rides with its body: one segment, no Nagle/delayed-ACK stall.
        if (eventStream && !errorAnswer) res.flushHeaders();
      },
      onResponseData(c, chunk) {
        tap?.feed(chunk);
        if (whole) {
          whole.push(chunk);
          return;
        }
        const out = translate ? translate.push(chunk) : filter ? filter.push(chunk) : chunk;
        if (out.length && !res.write(out)) {
          c.pause();
          res.once('drain', () => c.resume());
        }
      },
      onResponseEnd() {
        if (translate) res.end(translated(translate, whole, errorAnswer ? res.statusCode : 0));
        else {
          if (filter) {
            const rest = filter.flush();
            if (rest.length) res.write(rest);
          }
          res.end();
        }
        done(errorAnswer ? { kind: 'upstream-error', status: res.statusCode } : { kind: 'complete', tap: tap! });
      },
      onResponseError(_c, err) {
        if (settled) return;
        if (!headersSent) {
          if (res.destroyed) done({ kind: 'cut', tap: undefined, headersSent: false, by: 'client' });
          else done({ kind: 'failed', error: upstreamFailure(err) });
          return;
        }
        // A translated stream ends on an error event in the client's own format: its SDK raises that
        // error. Breaking the connection as well could make the client's TCP stack drop the event.
        if (translate && eventStream && !errorAnswer) res.end(translate.fail('The model provider broke off the answer.'));
        // Mid-answer: the client must see a broken response, not a complete-looking one.
        else res.destroy(err);
        done(errorAnswer ? { kind: 'upstream-error', status: res.statusCode } : { kind: 'cut', tap, headersSent: true, by: 'upstream' });
      },
    };

    req.pool.dispatch(
      {
        origin: req.origin,
        path: req.path,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        headersTimeout: req.headersTimeoutMs,
        bodyTimeout: req.idleTimeoutMs,
      },
      handler,
    );
  });
}
