import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher, Pool } from 'undici';
import { AppError } from '../shared/errors.js';
import { downstreamHeaders } from './headers.js';
import { answeredWhole, responseGone } from './http2-compat.js';
import type { AnswerTranslator } from './translate/index.js';
import { createUsageChunkFilter, type UsageChunkFilter } from './wire/chat/usage-chunk-filter.js';
import { createUsageTap, type UsageTap } from './wire/usage-tap.js';
import type { WireFormat } from './call.js';
import { firstEventIsError, retryableStatus } from './routing/first-byte.js';
import { retryAfterMs, type FailureReason } from './routing/health.js';
import type { AbandonedEnd, AbandonedReads } from './abandoned.js';
import type { ResponseIdReader } from './response-ids.js';
import { messagesErrorFromBedrock } from './wire/bedrock/errors.js';
import { bedrockErrorHeaders } from './wire/bedrock/client-errors.js';
import type { RefusalEpisode } from './upstream-auth/refusal-episode.js';
import { EVENT_STREAM_CONTENT_TYPE } from './wire/bedrock/event-stream.js';
import {
  createInvokeStreamDecoder,
  createInvokeStreamEncoder,
  type InvokeStreamDecoder,
  type InvokeStreamEncoder,
} from './wire/bedrock/invoke-stream.js';
import { createConverseJsonDecoder, createConverseStreamDecoder, type ConverseDecoder } from './wire/bedrock/converse-answer.js';

export type ForwardOutcome =
  /** Nothing reached the client yet: the caller answers with this error. */
  | { kind: 'failed'; error: AppError }
  /** The provider's own 3xx/4xx/5xx went through unchanged. */
  | { kind: 'upstream-error'; status: number; retryAfterMs?: number | undefined }
  | { kind: 'complete'; tap: UsageTap }
  /** Ended early after the client disconnected or the upstream broke mid-answer. */
  | { kind: 'cut'; tap: UsageTap | undefined; headersSent: boolean; by: 'client' | 'upstream' }
  /**
   * The client left after the request went to the provider, and the answer was
   * read on without being relayed (abandoned.ts): to its end (`complete`, or the
   * provider's own `error`), until the provider broke off (`broken`), or not at all
   * or not to its end (`timeout`, `over_limit`).
   */
  | { kind: 'abandoned'; tap: UsageTap | undefined; ended: AbandonedEnd }
  /** Only with `failover`: the provider failed before anything reached the client; the next deployment may take the call. */
  | { kind: 'retry'; reason: FailureReason; retryAfterMs: number | undefined };

export interface ForwardRequest {
  pool: Pool;
  origin: string;
  path: string;
  /** Flat name/value pairs, as undici takes them. */
  headers: string[];
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
  /**
   * Another deployment can take the call: a retryable status (429, 5xx) or a
   * stream whose first event is an error comes back as `retry` instead of
   * reaching the client, so a stream's head waits for its first event.
   */
  failover?: boolean;
  /** Stamped when the answer's head goes to the client (time to first byte). */
  timing?: { headAt: number; stream: boolean };
  /** Set for a billed call: when its client leaves, the answer is read on to learn what the provider bills. */
  abandoned?: AbandonedReads;
  /** Set for a Responses answer the provider may store: its id is read on the side (response-ids.ts). */
  responseId?: ResponseIdReader;
  /**
   * The client called a Bedrock path: InvokeModel's (Claude Code's Bedrock
   * mode), whose streamed answer is framed here in the binary event stream;
   * or Converse's (the AWS SDK's), whose answer the translator writes and
   * whose error answers name their exception in `x-amzn-errortype`.
   */
  bedrockClient?: 'invoke' | 'converse' | undefined;
  /** Set when the provider is Bedrock (its name): its error answers are rewritten as Messages errors (wire/bedrock/errors.ts). */
  bedrockProvider?: string;
  /** Set when a Bedrock provider serves the call through Converse (the upstream model): its answers are read as Chat's. */
  converse?: string;
  /** A Bedrock provider's refusals of its own credentials, logged once per episode, ended by an accepted call. */
  refusals?: RefusalEpisode | undefined;
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
 * One call's relay: undici's dispatch handler and the client's close
 * listener in one object, so a call costs one instance (its methods live on
 * the prototype) and one bound listener, not a closure per callback.
 */
class Relay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private headersSent = false;
  private errorAnswer = false;
  private eventStream = false;
  private tap: UsageTap | undefined;
  private filter: UsageChunkFilter | undefined;
  /** Set for Bedrock's binary event stream (read as the Messages or Chat stream it carries) and a whole Converse answer (read as Chat's), before anything else sees it. */
  private bedrock: InvokeStreamDecoder | ConverseDecoder | undefined;
  /** Set for a client of Bedrock's path: the Messages stream it gets, framed as Bedrock frames it. */
  private encoder: InvokeStreamEncoder | undefined;
  /** A Bedrock error answer being read whole, to be answered in the Messages shape at its end. */
  private bedrockError: { headers: IncomingHttpHeaders; status: number; chunks: Buffer[] } | undefined;
  /** A translated whole answer (JSON or error) is rewritten only once complete. */
  private whole: Buffer[] | undefined;
  /** With failover, a stream's first bytes wait here until its first event shows it is not an error. */
  private peek: Buffer[] | undefined;
  private head: { status: number; headers: IncomingHttpHeaders } | undefined;
  private retryAfter: number | undefined;
  /** Set while the answer is read on for its bill after the client left: nothing more is written. */
  private reading: NodeJS.Timeout | undefined;
  private readonly onClientClose = (): void => {
    if (answeredWhole(this.res)) return;
    const c = this.controller;
    const abandoned = this.req.abandoned;
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
      this.peek = undefined;
      this.whole = undefined;
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
    private readonly req: ForwardRequest,
    private readonly res: ServerResponse,
    private readonly resolve: (o: ForwardOutcome) => void,
  ) {
    res.on('close', this.onClientClose);
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
    this.req.abandoned!.end(ended, this.readTooLong);
    this.done({ kind: 'abandoned', tap: this.tap, ended });
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (responseGone(this.res)) c.abort(clientGone());
  }

  onResponseStart(c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    this.controller = c;
    if (status < 200) return;
    const { req } = this;
    // Read on after the client left, a retryable status is only the provider's error: nobody is left to serve.
    if (req.failover && !this.reading && retryableStatus(status)) {
      this.retry(c, `status_${status}` as FailureReason, retryAfterMs(headers['retry-after'], Date.now()));
      return;
    }
    // Redirects are relayed, never followed, and, like error answers, not billed.
    this.errorAnswer = status >= 300;
    if (!this.errorAnswer) req.refusals?.accepted();
    if (this.errorAnswer && req.bedrockProvider !== undefined && !this.reading) {
      this.bedrockError = { headers, status, chunks: [] };
      return;
    }
    // Kept for routing: a provider's own 429/503 still says how long to leave it alone.
    if (status === 429 || status === 503) this.retryAfter = retryAfterMs(headers['retry-after'], Date.now());
    const type = headers['content-type'];
    const binary = !this.errorAnswer && typeof type === 'string' && type.includes(EVENT_STREAM_CONTENT_TYPE);
    if (binary) {
      this.bedrock = req.converse === undefined ? createInvokeStreamDecoder() : createConverseStreamDecoder(req.converse);
      headers = { ...headers, 'content-type': 'text/event-stream; charset=utf-8' };
    } else if (!this.errorAnswer && req.converse !== undefined) this.bedrock = createConverseJsonDecoder(req.converse);
    this.eventStream = binary || (typeof type === 'string' && type.includes('text/event-stream'));
    if (!this.errorAnswer) this.tap = createUsageTap(req.format, this.eventStream);
    if (req.bedrockClient === 'invoke' && this.eventStream && !this.errorAnswer) this.encoder = createInvokeStreamEncoder();
    if (this.reading) return;
    if (!this.errorAnswer && this.eventStream && req.dropUsageChunk) this.filter = createUsageChunkFilter();
    if (req.translate && (this.errorAnswer || !this.eventStream)) this.whole = [];
    if (req.failover && this.eventStream && !this.errorAnswer) {
      this.head = { status, headers };
      this.peek = [];
      return;
    }
    this.writeHead(status, headers);
  }

  /** The head is built once, straight from the provider's headers, and written once. */
  private writeHead(status: number, headers: IncomingHttpHeaders): void {
    const { req, res } = this;
    const rewritten = this.filter !== undefined || req.translate !== undefined || this.bedrock !== undefined || this.encoder !== undefined;
    const head = downstreamHeaders(headers, rewritten, req.extraHeaders);
    if (this.encoder) head['content-type'] = EVENT_STREAM_CONTENT_TYPE;
    if (this.errorAnswer && req.bedrockClient === 'converse') Object.assign(head, bedrockErrorHeaders(status));
    res.writeHead(status, head);
    this.headersSent = true;
    if (req.timing) {
      req.timing.headAt = performance.now();
      req.timing.stream = this.eventStream;
    }
    // A stream's head goes out at once, so its client sees the status before the first event.
    // A whole answer's head rides with its body: one segment, no Nagle/delayed-ACK stall.
    if (this.eventStream && !this.errorAnswer) res.flushHeaders();
  }

  /** The provider's own error, relayed; with its retry-after only when it gave one. */
  private upstreamError(): ForwardOutcome {
    const status = this.res.statusCode;
    return this.retryAfter === undefined ? { kind: 'upstream-error', status } : { kind: 'upstream-error', status, retryAfterMs: this.retryAfter };
  }

  /** Nothing went to the client: the attempt is dropped and the call goes on elsewhere. */
  private retry(c: Dispatcher.DispatchController, reason: FailureReason, after: number | undefined): void {
    this.done({ kind: 'retry', reason, retryAfterMs: after });
    if (!c.aborted) c.abort(new Error('failing over'));
  }

  /** The peeked stream is sound (or ended): its head and what was held back go out now. */
  private release(c: Dispatcher.DispatchController): void {
    const held = this.peek!;
    this.peek = undefined;
    this.writeHead(this.head!.status, this.head!.headers);
    for (const chunk of held) this.relay(c, chunk);
  }

  onResponseData(c: Dispatcher.DispatchController, bytes: Buffer): void {
    if (this.settled) return;
    if (this.bedrockError) {
      this.bedrockError.chunks.push(bytes);
      return;
    }
    const chunk = this.bedrock ? this.decoded(c, bytes) : bytes;
    if (chunk === undefined) return;
    if (this.reading) {
      this.sideRead(chunk);
      return;
    }
    if (this.peek) {
      this.peek.push(chunk);
      const seen = this.peek.length === 1 ? chunk : Buffer.concat(this.peek);
      const verdict = firstEventIsError(seen);
      if (verdict === undefined) return;
      if (verdict) this.retry(c, 'first_event', undefined);
      else this.release(c);
      return;
    }
    this.relay(c, chunk);
  }

  /**
   * Bedrock's event-stream bytes as the Messages SSE they carry. A malformed
   * message ends the call as the provider's break: what was metered before
   * it is billed (edge/steps/meter.ts).
   */
  private decoded(c: Dispatcher.DispatchController, bytes: Buffer): Buffer | undefined {
    try {
      return Buffer.from(this.bedrock!.push(bytes));
    } catch (err) {
      this.broken(c, err as Error);
      return undefined;
    }
  }

  private broken(c: Dispatcher.DispatchController, err: Error): void {
    this.onResponseError(c, err);
    if (!c.aborted) c.abort(err);
  }

  /** Bedrock's error, whole, answered as a Messages (or, through Converse, Chat) error, in the client's format when the call was translated. */
  private answerBedrockError(e: { headers: IncomingHttpHeaders; status: number; chunks: Buffer[] }): void {
    const { req, res } = this;
    const errorType = e.headers['x-amzn-errortype'];
    const mapped = messagesErrorFromBedrock(
      req.bedrockProvider!,
      e.status,
      typeof errorType === 'string' ? errorType : undefined,
      Buffer.concat(e.chunks),
      req.converse !== undefined,
    );
    if (mapped.refusal !== undefined) req.refusals?.refused(mapped.refusal);
    const body = req.translate ? req.translate.error(mapped.status, mapped.body) : mapped.body;
    const head = downstreamHeaders({ 'content-type': 'application/json' }, true, req.extraHeaders);
    if (req.bedrockClient === 'converse') Object.assign(head, bedrockErrorHeaders(mapped.status));
    res.writeHead(mapped.status, head);
    this.headersSent = true;
    res.end(body);
    this.done(this.upstreamError());
  }

  /** What goes to the client: the bytes, or for a client of Bedrock's path their events in its framing. */
  private framed(out: Buffer): Buffer {
    return this.encoder && out.length ? this.encoder.push(out) : out;
  }

  /** The usage tap (and the response id reader, when there is one) read every byte of a billed answer. */
  private sideRead(chunk: Buffer): void {
    if (!this.tap) return;
    this.tap.feed(chunk);
    this.req.responseId?.feed(chunk, this.eventStream);
  }

  private relay(c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.sideRead(chunk);
    if (this.whole) {
      this.whole.push(chunk);
      return;
    }
    const translate = this.req.translate;
    const out = this.framed(translate ? translate.push(chunk) : this.filter ? this.filter.push(chunk) : chunk);
    if (out.length && !this.res.write(out)) {
      c.pause();
      this.res.once('drain', () => c.resume());
    }
  }

  onResponseEnd(c: Dispatcher.DispatchController): void {
    if (this.settled) return;
    let rest: string | void;
    try {
      rest = this.bedrock?.end();
    } catch (err) {
      this.broken(c, err as Error);
      return;
    }
    // A whole Converse answer is all held until its end.
    if (rest) {
      if (this.reading) this.sideRead(Buffer.from(rest));
      else this.relay(c, Buffer.from(rest));
    }
    if (this.reading) {
      this.readEnded(this.errorAnswer ? 'error' : 'complete');
      return;
    }
    if (this.bedrockError) {
      this.answerBedrockError(this.bedrockError);
      return;
    }
    if (this.peek) this.release(c);
    const { res, filter } = this;
    const translate = this.req.translate;
    if (translate) res.end(this.framed(translated(translate, this.whole, this.errorAnswer ? res.statusCode : 0)));
    else {
      if (filter) {
        const rest = this.framed(filter.flush());
        if (rest.length) res.write(rest);
      }
      res.end();
    }
    this.done(this.errorAnswer ? this.upstreamError() : { kind: 'complete', tap: this.tap! });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
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
    // A translated stream ends on an error event in the client's own format: its SDK raises that
    // error. Breaking the connection as well could make the client's TCP stack drop the event.
    if (this.req.translate && this.eventStream && !this.errorAnswer)
      res.end(this.framed(this.req.translate.fail('The model provider broke off the answer.')));
    // Mid-answer: the client must see a broken response, not a complete-looking one.
    else res.destroy(err);
    this.done(this.errorAnswer ? this.upstreamError() : { kind: 'cut', tap: this.tap, headersSent: true, by: 'upstream' });
  }
}

/**
 * Sends one call upstream through undici's dispatch and relays the answer as
 * it arrives: bytes unchanged (but for the usage chunk the proxy asked for),
 * paused while the client's socket is full, aborted when the client leaves.
 * Redirects are never followed: dispatch has no redirect handling.
 */
export function forward(req: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
  return new Promise((resolve) => {
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
      new Relay(req, res, resolve),
    );
  });
}
