/** The bytes of JSON text the proxy scans without parsing (body depth, the model splice, the usage tail). */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** JSON's four whitespace bytes (an index past the end reads as undefined: not space). */
export function isJsonSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Where the string opened by the quote at `open` closes (its closing quote), or `buf.length` if it never does. */
export function stringEnd(buf: Buffer, open: number): number {
  let i = open + 1;
  for (; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) break;
  }
  return Math.min(i, buf.length);
}
