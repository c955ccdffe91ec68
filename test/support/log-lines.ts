import { pino, type Logger } from 'pino';

/** A real pino logger whose lines land in `lines`, parsed: what an operator's log would hold. */
export function capturedLog(): { log: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const raw: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void raw.push(line) });
  return {
    log,
    get lines() {
      return raw.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    text: () => raw.join(''),
  };
}
