import { invalidInput } from '../../../shared/errors.js';
import type { Email } from '../../domain.js';
import type { MutableUser } from './resource.js';
import { booleanValue, checkEmailCount, emailList, emailValue, isObject, lowerKeys, MAX_FORMATTED, optionalString } from './values.js';

/**
 * RFC 7644 §3.5.2 PATCH on a User, as Okta and Entra ID send it. Operations
 * are applied in order to a copy; the caller writes the copy only when every
 * operation succeeded, so a PATCH is all-or-nothing.
 *
 * Supported paths (case-insensitive, optionally prefixed by the core User
 * schema URN and ":"): active, externalId, displayName, name,
 * name.givenName, name.familyName, name.formatted, emails, emails[<f>], emails[<f>].value,
 * emails[<f>].type, emails[<f>].primary where <f> is `type eq "…"`,
 * `value eq "…"` or `primary eq true|false`. userName is accepted and kept
 * unchanged (it is the IdP's unique identifier). Attributes of the core User schema and the
 * enterprise extension that this service does not keep are accepted and
 * ignored, exactly as on create. id, meta and schemas answer `mutability`;
 * anything else answers `invalidPath`.
 */

export const MAX_OPERATIONS = 100;
const MAX_PATH_LENGTH = 512;
const CORE_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:user';
const ENTERPRISE_PREFIX = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:user';

/** In the User schema (RFC 7643 §4.1) but not kept here. */
const IGNORED_CORE = new Set([
  'nickname',
  'profileurl',
  'title',
  'usertype',
  'preferredlanguage',
  'locale',
  'timezone',
  'password',
  'phonenumbers',
  'ims',
  'photos',
  'addresses',
  'entitlements',
  'roles',
  'x509certificates',
  'groups',
]);
const IGNORED_NAME_PARTS = new Set(['middlename', 'honorificprefix', 'honorificsuffix']);
const ENTERPRISE_ATTRIBUTES = new Set(['employeenumber', 'costcenter', 'organization', 'division', 'department', 'manager']);
const READ_ONLY = new Set(['id', 'meta', 'schemas']);

type Op = 'add' | 'replace' | 'remove';
type NamePart = 'given_name' | 'family_name' | 'name_formatted';
/** The user being patched, and whether an operation wrote name.formatted itself. */
type PatchState = MutableUser & { formattedWritten?: boolean };
interface EmailFilter {
  attr: 'type' | 'value' | 'primary';
  value: string | boolean;
}
type Target =
  | { kind: 'active' | 'externalId' | 'displayName' | 'userName' | 'ignored' }
  | { kind: 'name'; part: NamePart | 'ignored' | undefined }
  | { kind: 'emails'; filter: EmailFilter | undefined; sub: 'value' | 'type' | 'primary' | 'display' | undefined }
  | { kind: 'readOnly'; attr: string };

const invalidPath = (path: string, why: string) => invalidInput(`Unsupported PATCH path "${path}": ${why}`, 'invalidPath');

function parseEmailFilter(path: string, text: string): EmailFilter {
  const m = /^\s*(type|value|primary)\s+eq\s+(.+?)\s*$/i.exec(text);
  if (!m) throw invalidPath(path, 'only emails[type eq "…"], emails[value eq "…"] and emails[primary eq true|false] are supported.');
  const attr = m[1]!.toLowerCase() as EmailFilter['attr'];
  let literal: unknown;
  try {
    literal = JSON.parse(m[2]!);
  } catch {
    throw invalidPath(path, 'the filter value is not a valid literal.');
  }
  if (attr === 'primary' ? typeof literal !== 'boolean' : typeof literal !== 'string') {
    throw invalidPath(path, `emails[${attr} eq …] needs a ${attr === 'primary' ? 'boolean' : 'quoted string'}.`);
  }
  return { attr, value: literal as string | boolean };
}

export function parsePath(path: string): Target {
  if (path.length > MAX_PATH_LENGTH) throw invalidPath(path.slice(0, 64), 'too long.');
  let rest = path.trim();
  const lower = rest.toLowerCase();
  if (lower.startsWith(ENTERPRISE_PREFIX)) {
    const attr = lower.slice(ENTERPRISE_PREFIX.length);
    if (attr === '' || ENTERPRISE_ATTRIBUTES.has(attr.replace(/^:/, '').split('.')[0]!)) return { kind: 'ignored' };
    throw invalidPath(path, 'not an attribute of the enterprise User extension.');
  }
  if (lower.startsWith(`${CORE_PREFIX}:`)) rest = rest.slice(CORE_PREFIX.length + 1);
  else if (lower.startsWith('urn:')) throw invalidPath(path, 'unknown schema.');
  const m = /^([A-Za-z][\w$-]*)(?:\[(.*)\])?(?:\.([A-Za-z][\w$-]*))?$/s.exec(rest);
  if (!m) throw invalidPath(path, 'not an attribute path.');
  const attr = m[1]!.toLowerCase();
  const filterText = m[2];
  const sub = m[3]?.toLowerCase();
  if (READ_ONLY.has(attr)) return { kind: 'readOnly', attr: m[1]! };
  if (IGNORED_CORE.has(attr)) return { kind: 'ignored' };
  if (attr === 'emails') {
    if (sub !== undefined && !['value', 'type', 'primary', 'display'].includes(sub))
      throw invalidPath(path, `emails has no sub-attribute "${m[3]}".`);
    if (sub !== undefined && filterText === undefined) throw invalidPath(path, 'name the email with a filter, e.g. emails[type eq "work"].value.');
    const filter = filterText === undefined ? undefined : parseEmailFilter(path, filterText);
    return { kind: 'emails', filter, sub: sub as 'value' | 'type' | 'primary' | 'display' | undefined };
  }
  if (filterText !== undefined) throw invalidPath(path, `"${m[1]}" is not multi-valued.`);
  if (attr === 'name') {
    if (sub === undefined) return { kind: 'name', part: undefined };
    if (sub === 'givenname') return { kind: 'name', part: 'given_name' };
    if (sub === 'familyname') return { kind: 'name', part: 'family_name' };
    if (sub === 'formatted') return { kind: 'name', part: 'name_formatted' };
    if (IGNORED_NAME_PARTS.has(sub)) return { kind: 'name', part: 'ignored' };
    throw invalidPath(path, `name has no sub-attribute "${m[3]}".`);
  }
  if (sub !== undefined) throw invalidPath(path, `"${m[1]}" has no sub-attributes.`);
  if (attr === 'active') return { kind: 'active' };
  if (attr === 'externalid') return { kind: 'externalId' };
  if (attr === 'displayname') return { kind: 'displayName' };
  if (attr === 'username') return { kind: 'userName' };
  throw invalidPath(path, 'unknown attribute.');
}

function matches(email: Email, f: EmailFilter): boolean {
  if (f.attr === 'primary') return (email.primary === true) === f.value;
  const actual = email[f.attr];
  return typeof actual === 'string' && actual.toLowerCase() === (f.value as string).toLowerCase();
}

/** Only one email may be primary (RFC 7643 §2.4). */
function keepOnePrimary(emails: Email[], chosen: Email): void {
  if (chosen.primary !== true) return;
  for (const e of emails) if (e !== chosen && e.primary === true) delete e.primary;
}

function setEmailSub(email: Email, sub: 'value' | 'type' | 'primary', value: unknown, path: string): void {
  if (sub === 'primary') {
    email.primary = booleanValue(value, path);
    return;
  }
  const s = optionalString(value, path, sub === 'type' ? 64 : undefined);
  if (sub === 'value') {
    if (s === null || s.trim() === '') throw invalidInput(`"${path}" needs a non-empty string.`, 'invalidValue');
    email.value = s;
  } else if (s === null) delete email.type;
  else email.type = s;
}

function applyEmails(state: MutableUser, op: Op, t: Extract<Target, { kind: 'emails' }>, value: unknown, path: string): void {
  if (t.sub === 'display') return;
  if (!t.filter) {
    if (op === 'remove') state.emails = [];
    else if (op === 'replace') state.emails = emailList(value);
    else {
      for (const added of emailList(value)) {
        const same = state.emails.findIndex((e) => e.value.toLowerCase() === added.value.toLowerCase() && (e.type ?? '') === (added.type ?? ''));
        if (same >= 0) state.emails[same] = added;
        else state.emails.push(added);
        keepOnePrimary(state.emails, added);
      }
    }
    return;
  }
  const filter = t.filter;
  const matched = state.emails.filter((e) => matches(e, filter));
  if (op === 'remove') {
    if (t.sub === undefined || t.sub === 'value') state.emails = state.emails.filter((e) => !matched.includes(e));
    else for (const e of matched) delete e[t.sub];
    return;
  }
  if (t.sub === undefined) {
    if (!isObject(value)) throw invalidInput(`"${path}" needs an email object as its value.`, 'invalidValue');
    const given = lowerKeys(value);
    if (matched.length === 0) {
      const seed: Record<string, unknown> = filter.attr === 'primary' ? {} : { [filter.attr]: filter.value };
      const created = emailValue({ ...seed, ...value }, path);
      state.emails.push(created);
      keepOnePrimary(state.emails, created);
      return;
    }
    for (const e of matched) {
      for (const sub of ['value', 'type', 'primary'] as const) if (given.has(sub)) setEmailSub(e, sub, given.get(sub), `${path}.${sub}`);
      keepOnePrimary(state.emails, e);
    }
    return;
  }
  if (matched.length === 0) {
    // Entra ID sends `replace emails[type eq "work"].value` (sometimes as
    // `add`) whether or not a work email exists yet: create it.
    if (filter.attr === 'primary' || (filter.attr === 'type' && t.sub !== 'value')) {
      throw invalidInput(`No email matches "${path}".`, 'noTarget');
    }
    const draft: Email = { value: filter.attr === 'value' ? (filter.value as string) : '' };
    if (filter.attr === 'type') draft.type = filter.value as string;
    setEmailSub(draft, t.sub, value, path);
    const created = emailValue(draft, path);
    state.emails.push(created);
    keepOnePrimary(state.emails, created);
    return;
  }
  for (const e of matched) {
    setEmailSub(e, t.sub, value, path);
    keepOnePrimary(state.emails, e);
  }
}

function applyName(state: PatchState, op: Op, part: NamePart | 'ignored' | undefined, value: unknown, path: string): void {
  if (part === 'ignored') {
    if (op !== 'remove') optionalString(value, path, MAX_FORMATTED);
    return;
  }
  if (part) {
    state[part] = op === 'remove' ? null : optionalString(value, path, part === 'name_formatted' ? MAX_FORMATTED : undefined);
    if (part === 'name_formatted') state.formattedWritten = true;
    return;
  }
  if (op === 'remove' || value === null) {
    state.given_name = null;
    state.family_name = null;
    state.name_formatted = null;
    state.formattedWritten = true;
    return;
  }
  if (!isObject(value)) throw invalidInput(`"${path}" needs an object as its value.`, 'invalidValue');
  // Sub-attributes left out of the value are left unchanged (RFC 7644 §3.5.2.3).
  const m = lowerKeys(value);
  if (m.has('givenname')) state.given_name = optionalString(m.get('givenname'), `${path}.givenName`);
  if (m.has('familyname')) state.family_name = optionalString(m.get('familyname'), `${path}.familyName`);
  if (m.has('formatted')) {
    state.name_formatted = optionalString(m.get('formatted'), `${path}.formatted`, MAX_FORMATTED);
    state.formattedWritten = true;
  }
}

function applyOne(state: PatchState, op: Op, path: string, value: unknown): void {
  const t = parsePath(path);
  if (op !== 'remove' && value === undefined) throw invalidInput(`The "${op}" of "${path}" has no value.`, 'invalidValue');
  switch (t.kind) {
    case 'readOnly':
      throw invalidInput(`"${t.attr}" is read-only.`, 'mutability');
    case 'userName':
    case 'ignored':
      return;
    case 'active':
      // RFC 7644 §3.5.2.2: removing leaves it unassigned, which reads as the default, true.
      state.active = op === 'remove' ? true : booleanValue(value, path);
      return;
    case 'externalId': {
      const s = op === 'remove' ? null : optionalString(value, path);
      state.external_id = s === '' ? null : s;
      return;
    }
    case 'displayName':
      state.display_name = op === 'remove' ? null : optionalString(value, path);
      return;
    case 'name':
      applyName(state, op, t.part, value, path);
      return;
    case 'emails':
      applyEmails(state, op, t, value, path);
      return;
  }
}

/** A path-less add/replace: each member of the value object is an operation on that attribute. */
function applyPathless(state: PatchState, op: Op, value: unknown): void {
  if (op === 'remove') throw invalidInput('A "remove" needs a path.', 'noTarget');
  if (!isObject(value)) throw invalidInput(`A path-less "${op}" needs an object as its value.`, 'invalidValue');
  for (const [key, v] of Object.entries(value)) {
    const k = key.toLowerCase();
    // Connectors echo these back from the resource they read; they change nothing.
    if (READ_ONLY.has(k)) continue;
    if (k === CORE_PREFIX) {
      applyPathless(state, op, v);
      continue;
    }
    applyOne(state, op, key, v);
  }
}

function cloneUser(u: MutableUser): PatchState {
  return { ...u, emails: u.emails.map((e) => ({ ...e })) };
}

export function applyPatch(current: MutableUser, body: unknown): MutableUser {
  if (!isObject(body)) throw invalidInput('The request body must be a PatchOp object.', 'invalidSyntax');
  const ops = lowerKeys(body).get('operations');
  if (!Array.isArray(ops) || ops.length === 0) throw invalidInput('"Operations" must be a non-empty array.', 'invalidSyntax');
  if (ops.length > MAX_OPERATIONS) throw invalidInput(`At most ${MAX_OPERATIONS} operations per PATCH.`, 'invalidValue');
  const state = cloneUser(current);
  for (const raw of ops) {
    if (!isObject(raw)) throw invalidInput('Each operation must be an object.', 'invalidSyntax');
    const m = lowerKeys(raw);
    const opText = m.get('op');
    const op = typeof opText === 'string' ? opText.toLowerCase() : undefined;
    if (op !== 'add' && op !== 'replace' && op !== 'remove') {
      throw invalidInput('"op" must be "add", "replace" or "remove".', 'invalidSyntax');
    }
    const path = m.get('path');
    if (path !== undefined && path !== null && typeof path !== 'string') throw invalidInput('"path" must be a string.', 'invalidPath');
    if (typeof path === 'string' && path.trim() !== '') applyOne(state, op, path, m.get('value'));
    else applyPathless(state, op, m.get('value'));
  }
  checkEmailCount(state.emails);
  const { formattedWritten, ...next } = state;
  // A client that sent name.formatted owns it until it changes a part without sending it again: then it is derived.
  const partsChanged = next.given_name !== current.given_name || next.family_name !== current.family_name;
  if (partsChanged && !formattedWritten) next.name_formatted = null;
  return next;
}
