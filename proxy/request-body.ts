import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createZstdDecompress } from 'node:zlib';
import { invalidInput } from '../shared/errors.js';
import { tooLarge } from './wire/index.js';
import { cancelStream, overHttp2 } from './http2-compat.js';

/** The client went away before its body was read: nobody is left to answer. */
export class ClientLeft extends Error {}

/** The content codings a body may come in (Claude Code and Codex compress theirs in some modes), each a streaming decoder. */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip(),
  'x-gzip': () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
  zstd: () => createZstdDecompress(),
};

/** Called once with the body, or with why there is none. */
export type BodyCallback = (err: Error | undefined, body: Buffer | undefined) => void;

/**
 * The request body, at most `limit` bytes once decoded: larger is a 413, a
 * client leaving mid-body is ClientLeft. A compressed body (Content-Encoding
 * gzip, deflate, br or zstd) is decoded as it arrives and the limit applies
 * to what it decodes to, so a decompression bomb is refused as soon as its
 * output passes the limit, never inflated whole. A body that is not what its
 * coding says is a 400.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => takeBody(req, limit, (err, body) => (err ? reject(err) : resolve(body!))));
}

/** readBody without a promise: `done` is called once, from the body's last event (the edge's model calls make no promise for it). */
export function takeBody(req: IncomingMessage, limit: number, done: BodyCallback): void {
  const coding = req.headers['content-encoding']?.trim().toLowerCase();
  if (coding === undefined || coding === '' || coding === 'identity') return takePlain(req, limit, done);
  const decoder = DECODERS[coding];
  if (!decoder) return done(invalidInput(`Content-Encoding ${coding} is not supported: send gzip, deflate, br, zstd or none.`), undefined);
  takeDecoded(req, limit, coding, decoder(), done);
}

/** Bodies declared at least this large are read into one buffer of their length as they arrive. */
const PREALLOCATE_BYTES = 64 * 1024;

function takePlain(req: IncomingMessage, limit: number, done: BodyCallback): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return done(tooLarge(limit), undefined);
  // A body of one chunk (most: Node's parser hands over what one read holds, a copy of its own) is used as it came.
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  // A declared length is filled as the chunks come (Node's parser holds the body to it): joining 10 MiB at the end held the loop for up to ~70 ms under load.
  let whole: Buffer | undefined;
  let size = 0;
  let ended = false;
  const finish = (err: Error | undefined, body: Buffer | undefined) => {
    if (ended) return;
    ended = true;
    done(err, body);
  };
  const onData = (chunk: Buffer) => {
    if (size + chunk.length > limit) {
      req.off('data', onData);
      finish(tooLarge(limit), undefined);
      return;
    }
    if (size === 0 && declared >= PREALLOCATE_BYTES) whole = Buffer.allocUnsafeSlow(declared);
    if (whole && size + chunk.length <= whole.length) chunk.copy(whole, size);
    else if (size === 0) first = chunk;
    else {
      chunks ??= [whole ? whole.subarray(0, size) : first!];
      whole = undefined;
      chunks.push(chunk);
    }
    size += chunk.length;
  };
  req.on('data', onData);
  req.on('end', () => {
    if (whole) finish(undefined, size === whole.length ? whole : whole.subarray(0, size));
    else if (chunks) finish(undefined, Buffer.concat(chunks, size));
    else finish(undefined, first ?? Buffer.alloc(0));
  });
  // A client that leaves mid-body must not leave the call waiting (the error is made only then: a stack costs microseconds).
  const left = () => {
    if (!ended) finish(new ClientLeft(), undefined);
  };
  req.on('error', left);
  req.on('close', left);
}

function takeDecoded(req: IncomingMessage, limit: number, coding: string, decoder: Transform, done: BodyCallback): void {
  // The compressed bytes are at most as many as the decoded ones may be (a coding that grew a body past the limit is refused too).
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return done(tooLarge(limit), undefined);
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const stop = (err: Error) => {
    if (settled) return;
    settled = true;
    req.unpipe(decoder);
    decoder.destroy();
    done(err, undefined);
  };
  decoder.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) return stop(tooLarge(limit));
    chunks.push(chunk);
  });
  decoder.once('end', () => {
    if (settled) return;
    settled = true;
    done(undefined, Buffer.concat(chunks, size));
  });
  decoder.once('error', () => stop(invalidInput(`The request body is not valid ${coding} (its Content-Encoding).`)));
  req.once('error', () => stop(new ClientLeft()));
  req.once('close', () => {
    if (!req.complete) stop(new ClientLeft());
  });
  req.pipe(decoder);
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
 * Over HTTP/2 the connection stays: the body is discarded the same way, a
 * body read whole ends its stream as usual, and past the bounds only the
 * call's stream is cut (http2-compat.ts).
 */
export function lingerThenClose(req: IncomingMessage, bound: number): void {
  if (req.readableEnded) return;
  if (overHttp2(req)) {
    const cut = discardThen(req, bound, () => cancelStream(req));
    req.once('close', () => clearTimeout(cut));
    return;
  }
  const socket = req.socket;
  (socket as { destroySoon?: unknown }).destroySoon = undefined;
  const destroy = () => socket.destroy();
  // The whole body is in: close once the answer is out (Node ends our side after it).
  const cut = discardThen(req, bound, destroy, () => (socket.writableFinished ? destroy() : socket.once('finish', destroy)));
  socket.once('close', () => clearTimeout(cut));
}

/** Reads `req` on, throwing it away: `cutOff` past `bound` bytes or LINGER_MS, `ended` once it is all in. The timer is the caller's to clear when the transport closes. */
function discardThen(req: IncomingMessage, bound: number, cutOff: () => void, ended?: () => void): NodeJS.Timeout {
  let discarded = 0;
  const cut = setTimeout(cutOff, LINGER_MS);
  cut.unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bound) cutOff();
  });
  if (ended) req.once('end', ended);
  req.resume();
  return cut;
}
