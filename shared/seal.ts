import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Sealing of secrets the service must read back (unlike API keys, which are
 * only ever compared and so are stored as hashes). AES-256-GCM with a fresh
 * 96-bit nonce per seal; the `context` is bound as associated data so a
 * sealed value copied to another row (another org) does not open there.
 *
 * Format: `v1.<nonce>.<tag>.<ciphertext>`, each part base64url.
 */
const VERSION = 'v1';
export const SEAL_KEY_BYTES = 32;

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

function assertKey(key: Buffer): void {
  if (key.length !== SEAL_KEY_BYTES) throw new SealError(`sealing key must be ${SEAL_KEY_BYTES} bytes`);
}

export function seal(key: Buffer, plaintext: string, context: string): string {
  assertKey(key);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, nonce.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** Throws SealError when the value was sealed under another key or context, or was altered. */
export function unseal(key: Buffer, sealed: string, context: string): string {
  assertKey(key);
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SealError('not a sealed value');
  const [, nonce, tag, ciphertext] = parts as [string, string, string, string];
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('sealed value does not open under this key (wrong SECRETS_KEY, or altered)');
  }
}
