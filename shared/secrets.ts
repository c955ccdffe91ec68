import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets follow GitHub's token scheme: a brand prefix naming the kind, 30
 * base62 characters from a CSPRNG (~178 bits), and a 6-character base62
 * CRC32 checksum so that typos and truncations are rejected without a lookup.
 */
export const SECRET_PREFIXES = {
  apiKey: 'tgk_',
  consoleSession: 'tgs_',
  scimToken: 'tgp_',
  gatewayRefresh: 'tgr_',
  gatewayDeviceCode: 'tgd_',
} as const;
export type SecretKind = keyof typeof SECRET_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;

function base62(bytes: Buffer, length: number): string {
  let out = '';
  let i = 0;
  // Rejection sampling keeps every character uniform (no modulo bias).
  while (out.length < length) {
    if (i >= bytes.length) {
      bytes = randomBytes(length * 2);
      i = 0;
    }
    const b = bytes[i++]!;
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateSecret(kind: SecretKind): string {
  const body = SECRET_PREFIXES[kind] + base62(randomBytes(RANDOM_CHARS * 2), RANDOM_CHARS);
  return body + checksum(body);
}

const SECRET_LENGTH = 4 + RANDOM_CHARS + CHECKSUM_CHARS;
const BASE62 = /^[0-9A-Za-z]+$/;

/** Prefix and checksum check only: no lookup, no timing dependence on stored data. */
export function isWellFormedSecret(secret: string, kind: SecretKind): boolean {
  if (secret.length !== SECRET_LENGTH || !secret.startsWith(SECRET_PREFIXES[kind])) return false;
  const rest = secret.slice(4);
  if (!BASE62.test(rest)) return false;
  const body = secret.slice(0, SECRET_LENGTH - CHECKSUM_CHARS);
  return checksum(body) === secret.slice(SECRET_LENGTH - CHECKSUM_CHARS);
}

/** One-shot `hash` rather than a Hash object: the proxy hashes every call's key, and this is a third of the cost. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Shown in consoles: the brand prefix plus six characters, never enough to use. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, 10);
}

export function lastFour(secret: string): string {
  return secret.slice(-4);
}

/** Compares two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
