import { isObject } from '../../shared/json.js';

/** Statuses that say "this deployment, not this request": another one may answer the same call. */
const RETRYABLE = new Set([429, 500, 502, 503, 504, 529]);

export function retryableStatus(status: number): boolean {
  return RETRYABLE.has(status);
}

const EVENT_END = /\r?\n\r?\n/;

/**
 * Whether a stream's first event is an error (Anthropic sends
 * `overloaded_error` after its 200): true or false once the first event is
 * whole, undefined while it is still arriving. Read before the head goes to
 * the client, so such a stream can still be left for another deployment.
 */
export function firstEventIsError(bytes: Buffer): boolean | undefined {
  const text = bytes.toString('utf8');
  const end = text.search(EVENT_END);
  if (end < 0) return undefined;
  let data = '';
  for (const line of text.slice(0, end).split(/\r?\n/)) {
    if (/^event:\s*error\s*$/.test(line)) return true;
    if (line.startsWith('data:')) data += line.slice(5).trim();
  }
  // A comment or keep-alive first: not an answer yet, but nothing wrong; the stream goes on.
  if (!data) return false;
  try {
    const json: unknown = JSON.parse(data);
    return isObject(json) && (json.type === 'error' || (isObject(json.error) && json.choices === undefined));
  } catch {
    return false;
  }
}
