import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, conflict } from '../../../shared/errors.js';
import { parseSecretsKey, type Config } from '../../../shared/config.js';
import { SealError, seal, unseal } from '../../../shared/seal.js';

/** Seals and opens stored secrets under the service's SECRETS_KEY. */
export interface SecretSealer {
  seal(plaintext: string, context: string): string;
  unseal(sealed: string, context: string): string;
}

export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * The key comes from SECRETS_KEY. With the embedded store and no
 * SECRETS_KEY, one is generated on first use and kept beside the data in
 * DATA_DIR/secrets.key (0600): a single process owns that directory, so
 * there is no replica to share it with. With DATABASE_URL every replica must
 * open what another sealed, so a per-process key would be wrong: the caller
 * gets a 409 naming the missing setting instead.
 */
export function createSecretSealer(config: Config): SecretSealer {
  let key: Buffer | undefined = config.secretsKey;

  const resolveKey = (): Buffer => {
    if (key) return key;
    if (config.databaseUrl) {
      throw conflict(
        'SECRETS_KEY must be set to store an SSO client secret when the control plane uses DATABASE_URL: ' +
          'every replica must share the same 32-byte key (e.g. `openssl rand -base64 32`).',
      );
    }
    key = loadOrCreateKeyFile(join(config.dataDir, SECRETS_KEY_FILE));
    return key;
  };

  return {
    seal: (plaintext, context) => seal(resolveKey(), plaintext, context),
    unseal(sealed, context) {
      try {
        return unseal(resolveKey(), sealed, context);
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        throw new AppError(
          'unavailable',
          "The stored SSO client secret cannot be opened with this server's SECRETS_KEY. An administrator must run " +
            'every replica with the key it was saved under, or save the SSO settings again.',
          { cause: err },
        );
      }
    },
  };
}

function loadOrCreateKeyFile(path: string): Buffer {
  try {
    return parseKeyFile(path, readFileSync(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  const fresh = randomBytes(32);
  try {
    // 'wx': if another start-up won the race, read its key instead of replacing it.
    writeFileSync(path, `${fresh.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return parseKeyFile(path, readFileSync(path, 'utf8'));
  }
}

function parseKeyFile(path: string, text: string): Buffer {
  const parsed = parseSecretsKey(text);
  if (!parsed) throw new AppError('internal', `${path} does not hold a 32-byte key (hex or base64)`, { expose: false });
  return parsed;
}
