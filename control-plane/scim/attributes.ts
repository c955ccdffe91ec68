import { invalidInput } from '../../shared/errors.js';
import { isObject } from '../services/scim/values.js';

/**
 * `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9): which
 * attributes of a resource an answer carries. Names are case-insensitive,
 * may carry the core User schema URN, and may name a sub-attribute
 * (`name.givenName`, `emails.value`, `meta.created`). Attributes returned
 * "always" by /Schemas — id, schemas, userName — are in every answer
 * whatever the lists say. A name the resource does not have selects or
 * removes nothing: it is not an error, as the RFC asks of neither list.
 */
export interface Projection {
  /** Only these (plus the always-returned ones); undefined = the default set. */
  attributes: string[][] | undefined;
  /** Everything but these. */
  excluded: string[][] | undefined;
}

const CORE_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:user:';
const ALWAYS = new Set(['id', 'schemas', 'username']);
const MAX_NAMES = 64;
const NAME = /^[a-z][\w$-]*(?:\.[a-z][\w$-]*)?$/;

/** One parameter as sent: a comma-separated string in a query, a string array in a .search body. */
function parseList(raw: unknown, param: string): string[][] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const items = Array.isArray(raw) ? raw : [raw];
  const names: string[][] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw invalidInput(`"${param}" must be a comma-separated string or an array of strings.`, 'invalidValue');
    for (const part of item.split(',')) {
      let name = part.trim().toLowerCase();
      if (name === '') continue;
      if (name.startsWith(CORE_PREFIX)) name = name.slice(CORE_PREFIX.length);
      if (!NAME.test(name)) throw invalidInput(`"${param}" names "${part.trim().slice(0, 80)}", which is not an attribute name.`, 'invalidValue');
      names.push(name.split('.'));
    }
  }
  if (names.length > MAX_NAMES) throw invalidInput(`"${param}" names at most ${MAX_NAMES} attributes.`, 'invalidValue');
  return names.length ? names : undefined;
}

export function parseProjection(attributes: unknown, excludedAttributes: unknown): Projection {
  return { attributes: parseList(attributes, 'attributes'), excluded: parseList(excludedAttributes, 'excludedAttributes') };
}

/** A complex value (or each of a multi-valued one) cut down by `keep(subName)`; undefined when nothing is left. */
function cut(value: unknown, keep: (sub: string) => boolean): unknown {
  const one = (o: unknown) => {
    if (!isObject(o)) return undefined;
    const entries = Object.entries(o).filter(([k]) => keep(k.toLowerCase()));
    return entries.length ? Object.fromEntries(entries) : undefined;
  };
  if (Array.isArray(value)) {
    const kept = value.map(one).filter((v) => v !== undefined);
    return kept.length ? kept : undefined;
  }
  return one(value);
}

export function project<T extends object>(resource: T, p: Projection): Record<string, unknown> {
  if (!p.attributes && !p.excluded) return resource as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) {
    const k = key.toLowerCase();
    if (ALWAYS.has(k)) {
      out[key] = value;
      continue;
    }
    let v: unknown = value;
    if (p.attributes) {
      const wanted = p.attributes.filter((n) => n[0] === k);
      if (!wanted.length) continue;
      if (!wanted.some((n) => n.length === 1)) v = cut(v, (sub) => wanted.some((n) => n[1] === sub));
    }
    if (p.excluded && v !== undefined) {
      const dropped = p.excluded.filter((n) => n[0] === k);
      if (dropped.some((n) => n.length === 1)) continue;
      // A sub-attribute of a simple attribute names nothing: the attribute stays.
      if (dropped.length && (isObject(v) || Array.isArray(v))) v = cut(v, (sub) => !dropped.some((n) => n[1] === sub));
    }
    if (v !== undefined) out[key] = v;
  }
  return out;
}
