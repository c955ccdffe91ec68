/**
 * Server-to-client WebSocket text frames (RFC 6455 §5.2: FIN, opcode 1,
 * unmasked), several in one buffer: the events of one chunk of an answer go
 * out in one write, as the HTTP relay writes the chunk. Sent through the
 * `ws` library one by one, each event cost a header, a string conversion and
 * two entries of a vectored write: a socket turn then cost about 1.4 times
 * the proxy CPU of an HTTP one (docs/bench.md).
 */
export function textFrames(texts: readonly string[]): Buffer {
  let size = 0;
  const lengths = texts.map((t) => {
    const n = Buffer.byteLength(t);
    size += n + (n < 126 ? 2 : n < 65_536 ? 4 : 10);
    return n;
  });
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  texts.forEach((text, i) => {
    const n = lengths[i]!;
    out[at++] = 0x81;
    if (n < 126) out[at++] = n;
    else if (n < 65_536) {
      out[at++] = 126;
      at = out.writeUInt16BE(n, at);
    } else {
      out[at++] = 127;
      at = out.writeBigUInt64BE(BigInt(n), at);
    }
    at += out.write(text, at, 'utf8');
  });
  return out;
}
