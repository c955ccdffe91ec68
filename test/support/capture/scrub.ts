import type { Captured } from './server.js';

// Captures become test fixtures: the same client version must give the same
// file, and a file must stay small enough to read. So ids, dates, ports and
// temporary paths become placeholders, and long texts (system prompts, tool
// descriptions) keep their start and their length only. The structure —
// every field, every tool's type and schema — is kept whole.

const LONG = 300;
const KEEP = 120;

/** Headers whose value changes per run and tells nothing about the client. */
const DROPPED_HEADERS = new Set(['content-length', 'connection', 'sec-websocket-key']);

/** Dates only in bodies (today's date in a prompt): headers carry dated names (anthropic-beta) that must stay. */
export function scrubText(text: string, tmp: string, dates = false): string {
  const scrubbed = text
    .split(tmp)
    .join('<tmp>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/[0-9a-f]{32,}/gi, '<hex>');
  const out = dates ? scrubbed.replace(/\b\d{4}-\d{2}-\d{2}\b/g, '<date>') : scrubbed;
  return out.length > LONG ? `${out.slice(0, KEEP)}…<${out.length} chars>` : out;
}

/** Maps a client fills in hash order (Codex's client_metadata): sorted, or every run differs. */
const UNORDERED = new Set(['client_metadata']);

/** Clock readings a client puts in its items (Codex's item metadata `create_time`). */
const CLOCK_FIELDS = new Set(['create_time']);

export function scrubValue(value: unknown, tmp: string, unordered = false): unknown {
  if (typeof value === 'string') return scrubText(value, tmp, true);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, tmp));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]): [string, unknown] => [
      k,
      CLOCK_FIELDS.has(k) ? '<time>' : scrubValue(v, tmp, UNORDERED.has(k)),
    ]);
    if (unordered) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries);
  }
  return value;
}

export function scrubCaptured(entry: Captured, tmp: string): Captured {
  const headers = Object.fromEntries(
    Object.entries(entry.headers)
      .filter(([name]) => !DROPPED_HEADERS.has(name))
      .map(([name, value]) => [name, scrubText(value, tmp)]),
  );
  const out: Captured = { ...entry, headers };
  // The compressed size varies with the scrubbed-away ids; whether it was compressed does not.
  delete out.body_bytes;
  if (entry.body !== undefined) out.body = scrubValue(entry.body, tmp);
  return out;
}
