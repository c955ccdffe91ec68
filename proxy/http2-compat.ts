import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';

/**
 * Where Node's HTTP/2 compatibility API (start/http2-cleartext.ts hands its
 * request and response to the edge as http's) differs from http in what the
 * edge relies on. The rest — headers, `writeHead`, `flushHeaders`, `write`
 * with 'drain', `end`, `destroy`, 'close', `complete` — behaves alike.
 */

/** A request that came over HTTP/2. */
export function overHttp2(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 2;
}

/**
 * Whether the client's side of the answer is gone. http's response says so in
 * `destroyed`; HTTP/2's has no such field (undefined) and its stream does.
 */
export function responseGone(res: ServerResponse): boolean {
  const destroyed = res.destroyed as boolean | undefined;
  return destroyed ?? (res as unknown as Http2ServerResponse).stream.destroyed;
}

/**
 * Whether the answer went out whole, for a response that has closed. http's
 * `writableFinished` says so; HTTP/2's says true as well when the client
 * cancelled the stream (RST_STREAM) mid-answer, while `writableEnded` stays
 * false there: the answer was never ended. Both together mean the same on both.
 */
export function answeredWhole(res: ServerResponse): boolean {
  return res.writableEnded && res.writableFinished;
}

/**
 * Ends a call's stream alone (RST_STREAM CANCEL), the connection's other
 * calls going on: HTTP/2's form of closing the connection on a client that
 * keeps sending a refused body. Not NO_ERROR, which RFC 9113 §8.1 offers a
 * server that answered early: Node's own client (the AWS SDK's) then keeps
 * the unsent rest of its body pending, and its stream never closes.
 */
export function cancelStream(req: IncomingMessage): void {
  (req as unknown as Http2ServerRequest).stream.close(constants.NGHTTP2_CANCEL);
}
