import type { IncomingMessage } from 'node:http';
import { tooLarge } from './formats/index.js';

/** The client went away before its body was read: nobody is left to answer. */
export class ClientLeft extends Error {}

/** The request body, at most `limit` bytes: larger is a 413, a client leaving mid-body is ClientLeft. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) return reject(tooLarge(limit));
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        ended = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks, size));
    });
    // A client that leaves mid-body must not leave this promise hanging.
    req.once('error', () => reject(new ClientLeft()));
    req.once('close', () => {
      if (!ended) reject(new ClientLeft());
    });
  });
}

/** A refused body is read and thrown away for up to this long (and at least this much of it), so the client gets to read the 413. */
const LINGER_MS = 5_000;
export const LINGER_MIN_BYTES = 1024 * 1024;

/**
 * A refused body is read on and discarded, up to `bound` bytes and LINGER_MS,
 * before the connection closes: closing while the client still sends makes
 * its kernel see a reset and drop the 413 unread (EPIPE, "connection error").
 * The answer says `connection: close`, on which Node would destroy the socket
 * as soon as the answer is out; without `destroySoon` it only ends its own
 * side (Node then calls `end()`), and the socket goes once the body is in.
 */
export function lingerThenClose(req: IncomingMessage, bound: number): void {
  const socket = req.socket;
  if (req.readableEnded) return;
  (socket as { destroySoon?: unknown }).destroySoon = undefined;
  let discarded = 0;
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  cut.unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bound) socket.destroy();
  });
  // The whole body is in: close once the answer is out (Node ends our side after it).
  req.once('end', () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy())));
  socket.once('close', () => clearTimeout(cut));
  req.resume();
}
