import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { prettyLine } from './log-pretty.js';

export type { Logger };

/**
 * Logs never hold a key, token or prompt. Request bodies are never logged.
 * Redaction is by path and shallow: the credential headers of a logged `req`
 * or `headers`, and a `token`, `key` or `client_secret` field exactly one
 * level down (`{ session: { token } }`). A field of that name at the top of
 * the log object, or deeper, is not caught, so log ids and messages, never
 * whole objects that may carry a secret.
 */
export function createLogger(level: string, name: string, pretty = process.stdout.isTTY === true): Logger {
  const options: LoggerOptions = {
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
  };
  // A person at a terminal reads lines; anything else (a pipe, a container's log driver) gets pino's JSON as before.
  if (!pretty) return pino(options);
  const lines: DestinationStream = { write: (line: string) => process.stdout.write(prettyLine(line, true)) };
  return pino(options, lines);
}
