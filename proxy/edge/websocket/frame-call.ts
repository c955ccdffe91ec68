import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { OVER_WEBSOCKET } from '../../observe.js';

/**
 * The upgrade's headers a frame's call carries: the key and what the edge
 * reads (user-agent, session ids), never the handshake's own — its
 * `openai-beta: responses_websockets=…` would reach an HTTP provider.
 */
const HANDSHAKE = new Set(['connection', 'upgrade', 'openai-beta', 'content-length', 'content-encoding', 'transfer-encoding']);

function frameHeaders(upgrade: IncomingHttpHeaders, length: number): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(upgrade)) {
    if (!HANDSHAKE.has(name) && !name.startsWith('sec-websocket-')) headers[name] = value;
  }
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(length);
  return headers;
}

/**
 * One `response.create` frame as the HTTP request the edge serves: a
 * `POST /{ws}/v1/responses` whose body is the frame's request. The edge
 * reads headers, method, url and the body's events, nothing of a socket.
 */
class FrameRequest extends Readable {
  readonly [OVER_WEBSOCKET] = true;
  readonly method = 'POST';
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  /**
   * The whole body is here from the start, so it is complete: the edge never
   * reads on after a refusal (it lingers on an HTTP connection's socket, which
   * a frame has none of). A body over the limit never gets here (session.ts).
   */
  readonly complete = true;

  constructor(
    readonly url: string,
    upgrade: IncomingHttpHeaders,
    private body: Buffer | undefined,
  ) {
    super();
    this.headers = frameHeaders(upgrade, body!.length);
    this.rawHeaders = Object.entries(this.headers).flatMap(([n, v]) => (Array.isArray(v) ? v.flatMap((x) => [n, x]) : [n, String(v)]));
  }

  override _read(): void {
    if (this.body) this.push(this.body);
    this.body = undefined;
    this.push(null);
  }
}

/** Where a frame call's answer goes: the head, each chunk of its body, its end, or its cut. */
export interface AnswerSink {
  head(status: number, headers: OutgoingHttpHeaders): void;
  /** False when the socket's send buffer is over its mark: the writer waits for `drain`. */
  chunk(data: Buffer): boolean;
  end(): void;
}

/**
 * The answer side of a frame's call: the part of ServerResponse the edge
 * writes through (writeHead, write with back-pressure, end, destroy, and
 * the `close`/`drain` events the relay listens to), handed to `sink`.
 */
export class FrameResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  destroyed = false;
  writableEnded = false;
  writableFinished = false;

  constructor(private readonly sink: AnswerSink) {
    super();
  }

  writeHead(status: number, headers: OutgoingHttpHeaders = {}): this {
    this.statusCode = status;
    this.headersSent = true;
    this.sink.head(status, headers);
    return this;
  }

  flushHeaders(): void {}

  write(chunk: string | Buffer): boolean {
    if (this.destroyed || this.writableEnded) return false;
    return this.sink.chunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }

  end(chunk?: string | Buffer): this {
    if (this.writableEnded || this.destroyed) return this;
    if (chunk !== undefined && chunk.length) this.write(chunk);
    this.writableEnded = true;
    this.writableFinished = true;
    this.sink.end();
    this.emit('finish');
    this.emit('close');
    return this;
  }

  /** The socket went away (or the edge cut the answer): the relay sees its client leave. */
  destroy(): this {
    if (this.destroyed || this.writableFinished) return this;
    this.destroyed = true;
    this.emit('close');
    return this;
  }
}

/**
 * The request and response pair for one frame. The edge types them as
 * Node's own; the fakes carry every member it uses (the cast is the only
 * place that is asserted, not checked).
 */
export function frameCall(path: string, upgrade: IncomingHttpHeaders, body: Buffer, sink: AnswerSink) {
  const req = new FrameRequest(path, upgrade, body);
  const res = new FrameResponse(sink);
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse, answer: res };
}
