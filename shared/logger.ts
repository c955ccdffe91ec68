import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Logs never hold a key, token or prompt. Request bodies are never logged.
 * Redaction is by path and shallow: the credential headers of a logged `req`
 * or `headers`, and a `token`, `key` or `client_secret` field exactly one
 * level down (`{ session: { token } }`). A field of that name at the top of
 * the log object, or deeper, is not caught, so log ids and messages, never
 * whole objects that may carry a secret.
 */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'headers.authorization',
        'headers["x-api-key"]',
        'headers.cookie',
        '*.token',
        '*.key',
        '*.client_secret',
      ],
      censor: '[redacted]',
    },
  });
}
