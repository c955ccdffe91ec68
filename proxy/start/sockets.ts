import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../shared/logger.js';
import type { ProxySettings } from '../../shared/config.js';
import type { EdgeDeps } from '../edge/index.js';
import { refuseUpgrade } from '../edge/upgrade.js';
import { createResponsesSockets, type EdgeHandle, type ResponsesSockets } from '../edge/websocket/index.js';
import type { ProxyGaugeSources, ProxyMetrics } from '../metrics.js';

/** How often the WebSocket transport looks at its sockets' lifetimes, idle times and keys (a revoked key's socket closes within it). */
const SOCKET_TICK_MS = 1_000;

/**
 * The server's upgrades: Codex's WebSocket transport on `/{ws}/v1/responses`
 * (edge/websocket/) when PROXY_RESPONSES_WEBSOCKET is on; turned off, or on
 * another path, an upgrade is answered 426 at once, so the client falls back
 * to HTTP. Undefined when the transport is off.
 */
export function serveUpgrades(
  server: Server,
  settings: ProxySettings,
  deps: EdgeDeps,
  handle: EdgeHandle,
  logger: Logger,
  metrics: ProxyMetrics | undefined,
  gauges: ProxyGaugeSources,
): ResponsesSockets | undefined {
  const sockets = settings.responsesWebSocket
    ? createResponsesSockets(
        deps,
        handle,
        { lifetimeMs: settings.webSocketLifetimeMs, idleMs: settings.webSocketIdleMs, maxFrameBytes: settings.maxBodyBytes, tickMs: SOCKET_TICK_MS },
        logger,
        metrics && ((kind) => metrics.webSocketFrames.labels(kind).inc()),
      )
    : undefined;
  gauges.webSockets = () => sockets?.size() ?? 0;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    sockets ? sockets.upgrade(req, socket, head) : refuseUpgrade(req, socket, deps.now),
  );
  return sockets;
}
