import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { AppError } from '../../shared/errors.js';
import { downstreamHeaders } from '../headers.js';
import { answeredWhole, responseGone } from '../http2-compat.js';
import { retryAfterMs, type FailureReason } from '../routing/health.js';
import type { AbandonedEnd, AbandonedReads } from '../abandoned.js';
import type { UsageTap } from '../wire/usage-tap.js';
import { isEventStream } from './head.js';
import type { AnswerHandler } from './layer.js';
import type { ForwardOutcome } from './outcome.js';

type Controller = Dispatcher.DispatchController;

/** What the relay needs of the call to write its answer. */
export interface ClientSide {
  /** Added to the provider's headers (x-request-id, x-ratelimit-*). */
  extraHeaders: Record<string, string>;
  /** Stamped when the answer's head goes to the client (time to first byte). */
  timing?: { headAt: number; stream: boolean };
  /** Set for a billed call: when its client leaves, the answer is read on to learn what the provider bills. */
  abandoned?: AbandonedReads;
  /** Headers an error answer carries in the client's dialect (a Converse client's `x-amzn-errortype`). */
  errorHeaders?: ((status: number) => Record<string, string>) | undefined;
}

/** What a layer may ask of the relay that settles the call. */
export interface Settlement {
  /** The usage tap of a success answer, for the bill the outcome carries. */
  tapped(tap: UsageTap): void;
  /** Nothing reached the client: the attempt is dropped and the call goes on elsewhere. False once the client has left (nobody is left to serve). */
  failOver(c: Controller, reason: FailureReason, after: number | undefined): boolean;
}

/**
 * Raised by a layer that has already closed the answer in the client's own
 * format (translate-answer.ts): the response ends whole, so the client reads
 * that closing event, and the outcome is still the provider's break.
 */
export class AnswerClosed extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
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

/**
 * The innermost part of a call's relay: writes the answer as it comes to the
 * client (paused while the client's socket is full), and settles the call by
 * how it ended. When the client leaves, it aborts the provider's request, or
 * for a billed call reads the answer on, unwritten, for its bill. Undici's
 * handler and the client's close listener in one object: one instance and
 * one bound listener a call, not a closure per callback.
 */
export class Relay implements AnswerHandler, Dispatcher.DispatchHandler, Settlement {
  private controller: Controller | undefined;
  private settled = false;
  private headersSent = false;
  private errorAnswer = false;
  private eventStream = false;
  private tap: UsageTap | undefined;
  private retryAfter: number | undefined;
  /** Set while the answer is read on for its bill after the client left: nothing more is written. */
  private reading: NodeJS.Timeout | undefined;
  private readonly onClientClose = (): void => {
    if (answeredWhole(this.res)) return;
    const c = this.controller;
    const abandoned = this.call.abandoned;
    // Sent to the provider: it bills the call whether anyone reads the answer or not.
    if (abandoned && !abandoned.stopped && c && !c.aborted) {
      this.res.off('close', this.onClientClose);
      if (!abandoned.take(this.readTooLong)) {
        abandoned.refused();
        // Settled before the abort: undici reports an abort to onResponseError at once, which must not call it the provider's break.
        this.done({ kind: 'abandoned', tap: this.tap, ended: 'over_limit' });
        c.abort(clientGone());
        return;
      }
      this.reading = setTimeout(this.readTooLong, abandoned.readMs);
      // A read paused for the client's back-pressure would wait for a 'drain' that never comes.
      if (c.paused) c.resume();
      return;
    }
    this.done({ kind: 'cut', tap: this.tap, headersSent: this.headersSent, by: 'client' });
    if (c && !c.aborted) c.abort(clientGone());
  };
  private readonly readTooLong = (): void => {
    this.readEnded('timeout');
    this.controller?.abort(clientGone());
  };

  constructor(
    private readonly call: ClientSide,
    private readonly res: ServerResponse,
    private readonly resolve: (o: ForwardOutcome) => void,
  ) {
    res.on('close', this.onClientClose);
  }

  tapped(tap: UsageTap): void {
    this.tap = tap;
  }

  failOver(c: Controller, reason: FailureReason, after: number | undefined): boolean {
    if (this.reading || this.settled) return false;
    this.done({ kind: 'retry', reason, retryAfterMs: after });
    if (!c.aborted) c.abort(new Error('failing over'));
    return true;
  }

  private done(o: ForwardOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.res.off('close', this.onClientClose);
    this.resolve(o);
  }

  /** The read after the client left is over: its slot comes back and the call is billed by how it ended. */
  private readEnded(ended: AbandonedEnd): void {
    if (this.settled) return;
    clearTimeout(this.reading);
    this.call.abandoned!.end(ended, this.readTooLong);
    this.done({ kind: 'abandoned', tap: this.tap, ended });
  }

  onRequestStart(c: Controller): void {
    this.controller = c;
    if (responseGone(this.res)) c.abort(clientGone());
  }

  onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    this.controller = c;
    if (status < 200) return;
    // Redirects are relayed, never followed, and, like error answers, not billed.
    this.errorAnswer = status >= 300;
    // Kept for routing: a provider's own 429/503 still says how long to leave it alone.
    if (status === 429 || status === 503) this.retryAfter = retryAfterMs(headers['retry-after'], Date.now());
    this.eventStream = isEventStream(headers);
    if (this.reading || this.settled) return;
    const head = downstreamHeaders(headers, this.call.extraHeaders);
    if (this.errorAnswer && this.call.errorHeaders) Object.assign(head, this.call.errorHeaders(status));
    this.res.writeHead(status, head);
    this.headersSent = true;
    const timing = this.call.timing;
    if (timing) {
      timing.headAt = performance.now();
      timing.stream = this.eventStream;
    }
    // A stream's head goes out at once, so its client sees the status before the first event.
    // A whole answer's head rides with its body: one segment, no Nagle/delayed-ACK stall.
    if (this.eventStream && !this.errorAnswer) this.res.flushHeaders();
  }

  onResponseData(c: Controller, chunk: Buffer): void {
    if (this.settled || this.reading || chunk.length === 0) return;
    if (!this.res.write(chunk)) {
      c.pause();
      this.res.once('drain', () => c.resume());
    }
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (this.reading) {
      this.readEnded(this.errorAnswer ? 'error' : 'complete');
      return;
    }
    this.res.end();
    this.done(this.errorAnswer ? this.upstreamError() : { kind: 'complete', tap: this.tap! });
  }

  onResponseError(_c: Controller, err: Error): void {
    if (this.settled) return;
    if (this.reading) {
      this.readEnded('broken');
      return;
    }
    const { res } = this;
    if (!this.headersSent) {
      if (responseGone(res)) this.done({ kind: 'cut', tap: undefined, headersSent: false, by: 'client' });
      else this.done({ kind: 'failed', error: upstreamFailure(err) });
      return;
    }
    // Mid-answer: the client must see a broken response, not a complete-looking one, unless a layer closed it in its own format.
    if (err instanceof AnswerClosed) res.end();
    else res.destroy(err);
    this.done(this.errorAnswer ? this.upstreamError() : { kind: 'cut', tap: this.tap, headersSent: true, by: 'upstream' });
  }

  /** The provider's own error, relayed; with its retry-after only when it gave one. */
  private upstreamError(): ForwardOutcome {
    const status = this.res.statusCode;
    return this.retryAfter === undefined ? { kind: 'upstream-error', status } : { kind: 'upstream-error', status, retryAfterMs: this.retryAfter };
  }
}
