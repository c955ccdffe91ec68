/**
 * Server-to-client WebSocket text frames (RFC 6455 §5.2: FIN, opcode 1,
 * unmasked), several in one buffer: the events of one chunk of an answer go
 * out in one write, as the HTTP relay writes the chunk, each payload the
 * event's bytes as the provider (or the translation) wrote them. Sent through
 * the `ws` library one by one, each event cost a header, a string conversion
 * and two entries of a vectored write: a socket turn then cost about 1.4
 * times the proxy CPU of an HTTP one (docs/bench.md).
 */
export function textFrames(payloads: readonly Buffer[]): Buffer {
  let size = 0;
  for (const p of payloads) size += p.length + (p.length < 126 ? 2 : p.length < 65_536 ? 4 : 10);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const payload of payloads) {
    const n = payload.length;
    out[at++] = 0x81;
    if (n < 126) out[at++] = n;
    else if (n < 65_536) {
      out[at++] = 126;
      at = out.writeUInt16BE(n, at);
    } else {
      out[at++] = 127;
      at = out.writeBigUInt64BE(BigInt(n), at);
    }
    at += payload.copy(out, at);
  }
  return out;
}
