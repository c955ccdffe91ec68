import type { Socket } from 'node:net';

/** What every HTTP/2 connection with prior knowledge (h2c) opens with, RFC 9113 §3.4; no HTTP/1.1 request line can start so. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const P = 0x50;

/** Whether `head` is the preface or its start (undefined: too short to tell). */
function isPreface(head: Buffer): boolean | undefined {
  // An HTTP/1.1 method never starts with `PRI`: most first bytes decide it alone (GET, POST's `PO`, PUT's `PU`).
  const n = Math.min(head.length, PREFACE.length);
  if (head.compare(PREFACE, 0, n, 0, n) !== 0) return false;
  return n === PREFACE.length ? true : undefined;
}

/**
 * Reads a new connection's first bytes and puts them back, then hands the
 * socket on: `h2` true when they are the HTTP/2 preface. A connection that
 * sends nothing is closed after `timeoutMs`, as Node closes one that sends
 * no request head; one that breaks before deciding is dropped unhanded.
 * The cost to an HTTP/1.1 connection is this one read, once: its requests
 * never pass here.
 */
export function sniffPreface(socket: Socket, timeoutMs: number, handOn: (socket: Socket, h2: boolean) => void): void {
  let seen: Buffer | undefined;
  const dropped = (): void => {
    socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    const head = seen ? Buffer.concat([seen, chunk]) : chunk;
    const h2 = head[0] === P ? isPreface(head) : false;
    if (h2 === undefined) {
      seen = head;
      return;
    }
    socket.off('data', onData);
    socket.off('error', dropped);
    socket.off('timeout', dropped);
    socket.setTimeout(0);
    // Paused so nothing flows before the new owner listens; its 'data' listener (or, for HTTP/2, the session reading what is buffered) takes it from there.
    socket.pause();
    socket.unshift(head);
    handOn(socket, h2);
    if (!h2) process.nextTick(() => socket.resume());
  };
  socket.on('data', onData);
  // A reset before the first bytes has nobody else to hear it; unheard, it would end the process.
  socket.on('error', dropped);
  socket.setTimeout(timeoutMs);
  socket.on('timeout', dropped);
}
