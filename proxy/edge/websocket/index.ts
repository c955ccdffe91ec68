import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { AppError } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logger.js';
import { route } from '../route.js';
import { WIRE } from '../../wire/registry.js';
import type { EdgeDeps } from '../steps/step.js';
import { refuseUpgrade } from '../upgrade.js';
import { admitKey, keyStands, refuseOnSocket, type SocketKey } from './admit.js';
import { SocketSession, type EdgeHandle, type FrameCount } from './session.js';

export type { EdgeHandle, FrameCount } from './session.js';

/** At shutdown, how long a client has to answer the close frame before its socket is destroyed. */
const CLOSE_WAIT_MS = 1_000;

/** How long a socket lives, how long it may sit idle, and the frame size limit (the HTTP body limit). */
export interface SocketLimits {
  lifetimeMs: number;
  idleMs: number;
  maxFrameBytes: number;
  /** How often lifetimes, idle times and keys are looked at. */
  tickMs: number;
}

/** Codex's WebSocket transport on `/{ws}/v1/responses` (docs/proxy.md). */
export interface ResponsesSockets {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** A change to keys reached the proxy: every socket's key is looked at again now (a revoked key's socket closes). */
  recheckKeys(): void;
  /** Shutdown: no new sockets; idle ones close now with 1001, busy ones once their call is answered. */
  drain(): void;
  /** Whatever is left closes now (1001); the calls cut are billed for what they used. */
  closeAll(): void;
  size(): number;
}

const SHUTTING_DOWN = 'The proxy is shutting down.';

export function createResponsesSockets(
  deps: EdgeDeps,
  handle: EdgeHandle,
  limits: SocketLimits,
  logger: Logger,
  count: FrameCount = () => {},
): ResponsesSockets {
  // No compression: a deflated frame costs a zlib context per socket and can inflate past the limit before it is refused.
  const server = new WebSocketServer({ noServer: true, maxPayload: limits.maxFrameBytes, perMessageDeflate: false, clientTracking: false });
  const sessions = new Set<SocketSession>();
  let draining = false;

  function opened(ws: WebSocket, raw: Duplex, req: IncomingMessage, path: string, key: SocketKey): void {
    const s = new SocketSession(ws, raw, key, path, req.headers, handle, count, deps.now, limits.maxFrameBytes);
    sessions.add(s);
    ws.on('message', (data: Buffer, isBinary: boolean) => s.onFrame(data, isBinary));
    ws.on('error', (err) => logger.info({ err: err.message }, 'websocket closed on an error'));
    ws.on('close', () => sessions.delete(s));
    if (draining) s.close(1001, SHUTTING_DOWN);
  }

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const r = route(path);
    if (!r || !WIRE[r.format].edge.webSocket || r.action !== 'call' || req.method !== 'GET') return refuseUpgrade(req, socket, deps.now);
    if (draining) return refuseOnSocket(socket, new AppError('unavailable', `${SHUTTING_DOWN} Retry shortly.`), deps.now());
    socket.on('error', () => socket.destroy());
    void admitKey(deps, req, r.slug).then((admitted) => {
      if (admitted instanceof AppError) return refuseOnSocket(socket, admitted, deps.now());
      if (socket.destroyed) return;
      server.handleUpgrade(req, socket, head, (ws) => opened(ws, socket, req, path, admitted));
    });
  }

  function recheck(s: SocketSession): void {
    const judge = (stands: boolean | undefined) => {
      if (stands === false) s.cut(1008, 'The key is no longer valid.');
    };
    const hit = deps.keys.cached(s.key.hash);
    if (hit) return judge(keyStands(hit, s.key, deps.now()));
    void deps.keys.lookup(s.key.hash).then((found) => judge(keyStands(found, s.key, deps.now())));
  }

  // One timer for every socket (none per socket: an idle socket holds no timer).
  const tick = setInterval(() => {
    const now = deps.now();
    for (const s of sessions) {
      if (now - s.openedAt >= limits.lifetimeMs) s.close(1000, 'The connection reached its lifetime: open a new one.');
      else if (!s.busy && now - s.activeAt >= limits.idleMs) s.close(1000, 'The connection was idle too long.');
      else recheck(s);
    }
  }, limits.tickMs);
  tick.unref();

  return {
    upgrade,
    recheckKeys: () => {
      for (const s of sessions) recheck(s);
    },
    drain() {
      draining = true;
      clearInterval(tick);
      for (const s of sessions) s.close(1001, SHUTTING_DOWN);
    },
    closeAll() {
      for (const s of sessions) {
        s.cut(1001, SHUTTING_DOWN);
        // A client that never answers the close frame does not hold the shutdown.
        setTimeout(() => s.ws.terminate(), CLOSE_WAIT_MS).unref();
      }
    },
    size: () => sessions.size,
  };
}
