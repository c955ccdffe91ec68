/** A JSON object as parsed: keys to values not yet checked. */
export type JsonObject = Record<string, unknown>;

/** A JSON object (not null, not an array): the one check every parser of untyped JSON in the tree uses. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
