/**
 * A human line for a pino JSON line, for a terminal: `12:00:01 WARN  msg key=value`.
 * Production (stdout not a terminal) keeps JSON for the log pipeline.
 */
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

export function prettyLine(json: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const time = typeof entry.time === 'number' ? new Date(entry.time).toTimeString().slice(0, 8) : '';
  const label = (LEVELS[level] ?? String(level)).padEnd(5);
  const paint = color && level >= 40 ? (s: string) => `\x1b[${level >= 50 ? 31 : 33}m${s}\x1b[0m` : (s: string) => s;
  const fields = Object.entries(entry)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const err = entry.err as { stack?: string } | undefined;
  const stack = err?.stack ? `\n${err.stack}` : '';
  return `${time} ${paint(label)} ${typeof entry.msg === 'string' ? entry.msg : ''}${fields.length ? `  ${fields.filter((f) => !f.startsWith('err=')).join(' ')}` : ''}${stack}\n`;
}
