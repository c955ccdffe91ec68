import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Logs never hold a key, token or prompt: credentials are redacted by path,
 * and request bodies are never logged at all.
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
