import { isObject, type JsonObject } from '../../../shared/json.js';

/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset: `type` in capitals such as
 * `OBJECT`, `nullable`, `propertyOrdering`) → the JSON Schema every other
 * format takes. `parametersJsonSchema` and `responseJsonSchema` are JSON
 * Schema already and pass unchanged.
 */

const NESTED_MAPS = new Set(['properties', '$defs', 'definitions']);
const NESTED_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
/** Gemini-only hints with no JSON Schema meaning. */
const GEMINI_ONLY = new Set(['propertyOrdering', 'nullable']);

export function jsonSchemaOf(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (GEMINI_ONLY.has(key)) continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'items' || key === 'additionalProperties' || key === 'not') out[key] = jsonSchemaOf(value);
    else if (NESTED_MAPS.has(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, jsonSchemaOf(sub)]));
    else if (NESTED_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(jsonSchemaOf);
    else out[key] = value;
  }
  // `nullable: true` is JSON Schema's `null` type beside the given one.
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}
