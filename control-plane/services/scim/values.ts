import { invalidInput } from '../../../shared/errors.js';
import type { Email } from '../../domain.js';
import { isObject } from '../../../shared/json.js';

/** The tree's one JSON-object check, re-exported for the SCIM parsers. */
export { isObject };

/**
 * Value checks shared by create, replace and PATCH. Limits keep every value
 * inside what the indexes on users accept (a btree entry must stay under
 * ~2.7 kB), and NUL is refused because PostgreSQL text cannot hold it: both
 * would otherwise surface as a 500 from the database, as would a lone
 * surrogate inside the emails jsonb.
 */
export const MAX_STRING = 256;
/** Half of a UTF-16 surrogate pair on its own: not Unicode text, and jsonb refuses its escape. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const MAX_EMAILS = 20;
/** name.formatted is not indexed, and some directories build long ones (titles, several given names). */
export const MAX_FORMATTED = 1024;
const MAX_EMAIL_TYPE = 64;

/** Attribute names are case-insensitive (RFC 7643 §2.1): a lookup by lower-cased name. */
export function lowerKeys(o: Record<string, unknown>): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const [k, v] of Object.entries(o)) m.set(k.toLowerCase(), v);
  return m;
}

/** A string attribute; null (and absent) mean "no value". */
export function optionalString(v: unknown, attr: string, max = MAX_STRING): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw invalidInput(`"${attr}" must be a string.`, 'invalidValue');
  if (v.length > max) throw invalidInput(`"${attr}" is longer than ${max} characters.`, 'invalidValue');
  if (v.includes('\u0000')) throw invalidInput(`"${attr}" must not contain NUL characters.`, 'invalidValue');
  if (LONE_SURROGATE.test(v)) throw invalidInput(`"${attr}" is not valid Unicode text.`, 'invalidValue');
  return v;
}

/** Connectors send booleans as JSON booleans or, like Entra ID, as "True"/"False". */
export function booleanValue(v: unknown, attr: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  throw invalidInput(`"${attr}" must be a boolean.`, 'invalidValue');
}

export function userNameValue(v: unknown): string {
  const s = optionalString(v, 'userName');
  if (s === null || s.trim() === '') throw invalidInput('"userName" is required and must be a non-empty string.', 'invalidValue');
  return s;
}

/** One email; `display` and other sub-attributes are ignored. */
export function emailValue(v: unknown, attr = 'emails'): Email {
  if (!isObject(v)) throw invalidInput(`"${attr}" entries must be objects.`, 'invalidValue');
  const m = lowerKeys(v);
  const value = optionalString(m.get('value'), `${attr}.value`);
  if (value === null || value.trim() === '') throw invalidInput(`"${attr}.value" is required.`, 'invalidValue');
  const email: Email = { value };
  const type = optionalString(m.get('type'), `${attr}.type`, MAX_EMAIL_TYPE);
  if (type !== null) email.type = type;
  const primary = m.get('primary');
  if (primary !== null && primary !== undefined) email.primary = booleanValue(primary, `${attr}.primary`);
  return email;
}

export function emailList(v: unknown): Email[] {
  if (v === null || v === undefined) return [];
  const items = Array.isArray(v) ? v : [v];
  if (items.length > MAX_EMAILS) throw invalidInput(`"emails" holds at most ${MAX_EMAILS} values.`, 'invalidValue');
  const emails = items.map((e) => emailValue(e));
  // At most one primary (RFC 7643 §2.4): the first one claiming it keeps it.
  const first = emails.find((e) => e.primary === true);
  for (const e of emails) if (e !== first && e.primary === true) delete e.primary;
  return emails;
}

export function checkEmailCount(emails: Email[]): void {
  if (emails.length > MAX_EMAILS) throw invalidInput(`"emails" holds at most ${MAX_EMAILS} values.`, 'invalidValue');
}
