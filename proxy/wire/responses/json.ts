/** Small readers for untyped JSON, shared by the Responses format and its translations. */

import type { JsonObject } from '../../../shared/json.js';

export type Json = JsonObject;

/** A token count as a provider reported it: a non-negative finite number, else 0. */
export function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
