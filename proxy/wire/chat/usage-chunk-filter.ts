/** Chat Completions stream handling: the usage chunk the proxy asked for, dropped when the client did not ask. */

/** Passes a stream's bytes on, frame by frame, minus what it drops. */
export interface UsageChunkFilter {
  push(chunk: Buffer): Buffer;
  flush(): Buffer;
}

const EMPTY = Buffer.alloc(0);
const LF_LF = Buffer.from('\n\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');
const USAGE_KEY = Buffer.from('"usage"');
const EMPTY_CHOICES = /"choices"\s*:\s*\[\s*\]/;
const SPACE = 0x20;
const COLON = 0x3a;
const BRACE = 0x7b;

/**
 * Whether `buf` has a `"usage"` key whose value is an object, compact
 * (`"usage":{`) or spaced as Python writes JSON (`"usage": {`): one native
 * search per key, then the bytes after it decide (OpenAI's deltas carry
 * `"usage":null`). The stream reader's `valueOpens` (usage.ts) is the same
 * test on decoded text; this one runs on the bytes, before any decoding.
 */
function holdsUsageObject(buf: Buffer): boolean {
  for (let at = buf.indexOf(USAGE_KEY); at >= 0; at = buf.indexOf(USAGE_KEY, at + USAGE_KEY.length)) {
    let i = at + USAGE_KEY.length;
    while (buf[i] === SPACE) i++;
    if (buf[i] !== COLON) continue;
    do i++;
    while (buf[i] === SPACE);
    if (buf[i] === BRACE) return true;
  }
  return false;
}

/** Only a frame holding a usage object is decoded and tested; every delta frame is a native byte search. */
function isUsageOnly(frame: Buffer): boolean {
  return holdsUsageObject(frame) && EMPTY_CHOICES.test(frame.toString('utf8'));
}

/** Whether a chunk ends where an SSE frame does (a blank line). */
function endsFrame(chunk: Buffer): boolean {
  const n = chunk.length;
  return (
    n >= 2 && chunk[n - 1] === 0x0a && (chunk[n - 2] === 0x0a || (n >= 4 && chunk[n - 2] === 0x0d && chunk[n - 3] === 0x0a && chunk[n - 4] === 0x0d))
  );
}

/** The first blank line (LF LF or CRLF CRLF) at or after `from`, found natively. */
function frameEnd(buf: Buffer, from: number): { at: number; len: number } | undefined {
  const lf = buf.indexOf(LF_LF, from);
  const crlf = buf.indexOf(CRLF_CRLF, from);
  if (lf < 0 && crlf < 0) return undefined;
  return crlf < 0 || (lf >= 0 && lf < crlf) ? { at: lf, len: 2 } : { at: crlf, len: 4 };
}

/**
 * Drops the usage-only final chunk (`"choices":[]` with a usage object) that
 * the proxy asked for on the client's behalf; every other frame passes
 * byte-for-byte. Frames are cut at the blank line that ends an SSE event.
 */
export function createUsageChunkFilter(): UsageChunkFilter {
  let pending = EMPTY;
  return {
    push(chunk) {
      // The usual chunk: whole frames, none with a usage object. It passes as it is, with no copy.
      if (!pending.length && endsFrame(chunk) && !holdsUsageObject(chunk)) return chunk;
      const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const out: Buffer[] = [];
      let start = 0;
      for (let b = frameEnd(buf, 0); b; b = frameEnd(buf, start)) {
        const frame = buf.subarray(start, b.at + b.len);
        if (!isUsageOnly(frame)) out.push(frame);
        start = b.at + b.len;
      }
      pending = start === buf.length ? EMPTY : Buffer.from(buf.subarray(start));
      return out.length === 1 ? out[0]! : Buffer.concat(out);
    },
    flush() {
      const rest = pending;
      pending = EMPTY;
      return rest.length && isUsageOnly(rest) ? EMPTY : rest;
    },
  };
}
