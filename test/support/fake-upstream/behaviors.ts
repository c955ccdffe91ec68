/** How each behaviour plays out on the wire, once a request has been accepted (or rejected). */
import type { Answer } from './answers.js';
import type { Dialect } from './errors.js';
import type { Responder } from './responder.js';

/** One response in the making: where it goes, which provider it impersonates, its request id. */
export interface Reply {
  r: Responder;
  dialect: Dialect;
  requestId: string;
}

const REQUEST_ID_HEADER: Record<Dialect, string> = { openai: 'x-request-id', anthropic: 'request-id', google: 'x-request-id' };

export function sendJson(reply: Reply, status: number, body: string, headers?: Record<string, string>): void {
  reply.r.res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    [REQUEST_ID_HEADER[reply.dialect]]: reply.requestId,
    ...headers,
  });
  reply.r.res.end(body);
}

function startStream(reply: Reply, contentType = 'text/event-stream'): void {
  reply.r.res.writeHead(200, {
    'content-type': contentType,
    'cache-control': 'no-cache',
    [REQUEST_ID_HEADER[reply.dialect]]: reply.requestId,
  });
}

export async function answerOk(reply: Reply, answer: Answer, delayMs: number): Promise<void> {
  const { r } = reply;
  if (!answer.stream) {
    // A non-streamed answer takes as long as the same answer would take to stream.
    if (delayMs > 0 && answer.tokens > 0) await r.pause(delayMs * answer.tokens);
    if (r.open) sendJson(reply, 200, answer.json);
    return;
  }
  startStream(reply, answer.contentType);
  if (await r.writeFrames(answer.frames, 0, answer.frames.length, delayMs)) r.res.end();
}

/** Sends nothing more, ever (a stream: after its first `events`); the exchange ends when the client leaves. */
export function stall(reply: Reply, answer: Answer, when: 'before-headers' | 'after-first-event', events: number): void {
  if (when === 'before-headers') return;
  if (answer.stream) {
    startStream(reply, answer.contentType);
    void reply.r.writeFrames(answer.frames, 0, Math.min(events, answer.frames.length), 0);
    return;
  }
  reply.r.res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(answer.json),
    [REQUEST_ID_HEADER[reply.dialect]]: reply.requestId,
  });
  reply.r.res.flushHeaders();
}

/** Drops the connection part-way: after `afterEvents` events, or half the JSON body. */
export async function cutOff(reply: Reply, answer: Answer, afterEvents: number): Promise<void> {
  const { r } = reply;
  if (answer.stream) {
    startStream(reply, answer.contentType);
    if (!(await r.writeFrames(answer.frames, 0, Math.min(afterEvents, answer.frames.length), 0))) return;
  } else {
    const bytes = Buffer.from(answer.json);
    r.res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': bytes.length,
      [REQUEST_ID_HEADER[reply.dialect]]: reply.requestId,
    });
    r.res.write(bytes.subarray(0, bytes.length >> 1));
  }
  r.hangUp();
}

/** Closes the connection without a byte of answer. */
export function drop(reply: Reply): void {
  reply.r.res.socket?.destroy();
}

/** A 200 stream whose first event is the provider's error, as Anthropic sends `overloaded_error` mid-handshake. */
export function streamError(reply: Reply): void {
  startStream(reply);
  const event =
    reply.dialect === 'anthropic'
      ? 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
      : reply.dialect === 'google'
        ? 'data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}\r\n\r\n'
        : 'data: {"error":{"message":"The server is overloaded.","type":"server_error","code":null}}\n\n';
  reply.r.res.end(event);
}
