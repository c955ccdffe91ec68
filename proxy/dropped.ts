/**
 * What a translation dropped: a well-formed field, tool or part the
 * provider's format cannot honour. Each name reaches the client in the
 * `x-tollgate-dropped` header, the access log and a metric. Names come from
 * the translators, but an unknown top-level field is named as the client
 * spelled it, so a name is made header-safe and the list is bounded.
 */

/** The header the names are listed in, comma-separated. */
export const DROPPED_HEADER = 'x-tollgate-dropped';

/** Longest header value: a client sending hundreds of unknown fields gets the first ones and `…`. */
const MAX_HEADER_CHARS = 2048;

const SAFE = /^[A-Za-z0-9_.[\]\-:/]{1,100}$/;

/** A name as it may appear in a header, a log line and a metric label. */
export function safeDroppedName(name: string): string {
  return SAFE.test(name) ? name : encodeURIComponent(name.slice(0, 100));
}

/** The header value for the names (already made safe). */
export function droppedHeaderValue(names: readonly string[]): string {
  let out = '';
  for (const name of names) {
    const next = out === '' ? name : `${out},${name}`;
    if (next.length > MAX_HEADER_CHARS) return `${out},…`;
    out = next;
  }
  return out;
}
