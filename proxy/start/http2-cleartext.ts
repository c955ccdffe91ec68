import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { sniffPreface } from './preface.js';

/**
 * Streams one HTTP/2 connection may have open at once: RFC 9113 asks for at
 * least 100; Node's default is unbounded, so one connection could open
 * thousands of calls that each take a hold.
 */
const MAX_CONCURRENT_STREAMS = 128;

/** HTTP/2 beside HTTP/1.1 on the proxy's port; undefined when PROXY_HTTP2_CLEARTEXT is off. */
export interface CleartextHttp2 {
  /** No new streams: each session is told to go away (GOAWAY) and closes once its streams are done; connections still silent are closed. */
  drain(): void;
  /** Cuts what is left at the shutdown deadline. */
  closeAll(): void;
}

/**
 * Serves cleartext HTTP/2 (h2c, prior knowledge) on `server`'s port: the AWS
 * SDK's Bedrock runtime client speaks nothing else to an `http://` endpoint.
 * Each new connection's first bytes are read (preface.ts): the HTTP/2
 * preface hands it to an HTTP/2 server, anything else to `server` as before
 * — so Node's own connection handling (its request timeouts, idle
 * keep-alive and shutdown bookkeeping) stays `server`'s, which is why the
 * hand-off takes `server`'s own connection listener rather than listening
 * on a bare socket server. Both run `handle`: Node's HTTP/2 compatibility
 * API gives it a request and response shaped as http's, and the few places
 * where they differ are in ../http2-compat.ts. Upgrades (the Responses
 * WebSocket) stay HTTP/1.1's: HTTP/2 has none.
 */
export function serveCleartextHttp2(server: Server, handle: (req: IncomingMessage, res: ServerResponse) => void, idleMs: number): CleartextHttp2 {
  const h2 = createServer({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }, (req: Http2ServerRequest, res: Http2ServerResponse) =>
    handle(req as unknown as IncomingMessage, res as unknown as ServerResponse),
  );
  const sessions = new Set<ServerHttp2Session>();
  const sniffing = new Set<Socket>();
  h2.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    closeWhenIdle(session, idleMs);
  });

  const http1 = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  // One listener for every socket, not a closure each.
  function forget(this: Socket): void {
    sniffing.delete(this);
  }
  const handOn = (socket: Socket, isH2: boolean): void => {
    sniffing.delete(socket);
    socket.off('close', forget);
    if (isH2) h2.emit('connection', socket);
    else for (const listener of http1) listener.call(server, socket);
  };
  server.on('connection', (socket: Socket) => {
    sniffing.add(socket);
    socket.once('close', forget);
    sniffPreface(socket, server.headersTimeout, handOn);
  });

  return {
    drain() {
      for (const socket of sniffing) socket.destroy();
      for (const session of sessions) session.close();
    },
    closeAll() {
      for (const session of sessions) session.destroy();
    },
  };
}

/**
 * A session without a stream for `idleMs` is closed, as HTTP/1.1's
 * keep-alive timeout closes an idle connection. Not the session's own
 * timeout: that counts silence, and a call may wait minutes for its
 * provider's first byte without a frame on the connection.
 */
function closeWhenIdle(session: ServerHttp2Session, idleMs: number): void {
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const wait = (): void => {
    idle = setTimeout(() => session.close(), idleMs);
    idle.unref();
  };
  session.on('stream', (stream) => {
    if (open++ === 0) clearTimeout(idle);
    stream.once('close', () => {
      if (--open === 0 && !session.closed) wait();
    });
  });
  session.once('close', () => clearTimeout(idle));
  wait();
}
