import { randomUUID } from 'node:crypto';

/**
 * `req_`, the time in milliseconds as 12 hex digits, then 80 random bits as
 * 20 hex digits (from a random UUID, skipping its fixed version and variant
 * digits). Ids made close in time sort together, so the ledger's unique index
 * on them grows at its right edge rather than at a random page per settled
 * request. Slices, not a regex replace: this runs once per request.
 */
export function newRequestId(nowMs: number): string {
  const u = randomUUID();
  const time = Math.max(0, Math.floor(nowMs)).toString(16).padStart(12, '0');
  return `req_${time}${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(24, 32)}`;
}
