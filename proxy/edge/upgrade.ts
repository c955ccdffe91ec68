import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NowMs } from '../../shared/clock.js';
import { errorBody } from '../wire/errors.js';
import { newRequestId } from '../request-id.js';
import { formatOfPath } from './route.js';

/**
 * A WebSocket (or any other) upgrade: the proxy speaks plain HTTP only, and
 * says so at once with `426 Upgrade Required`. Codex opens `/v1/responses`
 * over a WebSocket first; on a 426 it streams over HTTP straight away,
 * while any other answer makes it retry the socket for seconds.
 */
export function refuseUpgrade(req: IncomingMessage, socket: Duplex, now: NowMs): void {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  const body = errorBody(
    formatOfPath(path),
    'invalid_input',
    'WebSocket is not supported here: send the request over plain HTTP.',
    'upgrade_required',
  );
  socket.on('error', () => socket.destroy());
  socket.end(
    `HTTP/1.1 426 Upgrade Required\r\nupgrade: HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${newRequestId(now())}\r\nconnection: close\r\n\r\n${body}`,
  );
}
