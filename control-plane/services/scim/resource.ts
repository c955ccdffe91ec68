import { invalidInput } from '../../../shared/errors.js';
import type { Email, User } from '../../domain.js';
import type { UserFields } from '../../stores/users.js';
import { booleanValue, emailList, isObject, lowerKeys, MAX_FORMATTED, optionalString, userNameValue } from './values.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The attributes SCIM may change; user_name is set once, at creation. */
export type MutableUser = Omit<UserFields, 'user_name' | 'name_formatted'> & { name_formatted: string | null };

export interface ScimUser {
  schemas: string[];
  id: string;
  userName: string;
  externalId?: string;
  name?: { givenName?: string; familyName?: string; formatted?: string };
  displayName?: string;
  active: boolean;
  emails?: Email[];
  meta: { resourceType: 'User'; created: string; lastModified: string; location: string };
}

export function scimBaseUrl(publicBaseUrl: string, orgId: string): string {
  return `${publicBaseUrl}/v1/scim/v2/orgs/${orgId}`;
}

export function userLocation(publicBaseUrl: string, orgId: string, id: string): string {
  return `${scimBaseUrl(publicBaseUrl, orgId)}/Users/${id}`;
}

/** value, type, primary in that order, whatever order the jsonb column keeps its keys in. */
export function canonicalEmail(e: Email): Email {
  const out: Email = { value: e.value };
  if (e.type !== undefined && e.type !== null) out.type = e.type;
  if (e.primary !== undefined && e.primary !== null) out.primary = e.primary;
  return out;
}

/** name.formatted as answered: what the client sent, else given and family name joined by a space. */
export function formattedName(u: Pick<User, 'given_name' | 'family_name' | 'name_formatted'>): string | null {
  if (u.name_formatted !== null) return u.name_formatted;
  return [u.given_name, u.family_name].filter((p) => p !== null && p !== '').join(' ') || null;
}

/**
 * name.formatted as stored: null when what was sent is what would be derived
 * anyway, so a connector echoing a resource it read back (Okta's PUT does)
 * neither freezes the derived value nor shows up as a change.
 */
export function storedFormatted(u: Pick<User, 'given_name' | 'family_name' | 'name_formatted'>): string | null {
  return u.name_formatted !== null && u.name_formatted === formattedName({ ...u, name_formatted: null }) ? null : u.name_formatted;
}

/**
 * Unassigned attributes are omitted (RFC 7643 §2.5), `name` included when
 * it has no part: an empty `name: {}` trips clients that read
 * `name.givenName` as soon as `name` exists. Nothing outside this list is
 * ever echoed.
 */
export function toScimUser(user: User, publicBaseUrl: string): ScimUser {
  const name: NonNullable<ScimUser['name']> = {};
  if (user.given_name !== null) name.givenName = user.given_name;
  if (user.family_name !== null) name.familyName = user.family_name;
  const formatted = formattedName(user);
  if (formatted !== null) name.formatted = formatted;
  const out: ScimUser = {
    schemas: [USER_SCHEMA],
    id: user.id,
    userName: user.user_name,
    ...(Object.keys(name).length ? { name } : {}),
    active: user.active,
    // An empty list is "unassigned" (RFC 7643 §2.5) and is left out, so a `remove` of emails reads back as removed.
    ...(user.emails.length ? { emails: user.emails.map(canonicalEmail) } : {}),
    meta: {
      resourceType: 'User',
      created: new Date(user.created_at).toISOString(),
      lastModified: new Date(user.updated_at).toISOString(),
      location: userLocation(publicBaseUrl, user.org_id, user.id),
    },
  };
  if (user.external_id !== null) out.externalId = user.external_id;
  if (user.display_name !== null) out.displayName = user.display_name;
  return out;
}

/** What a POST or PUT body says; `undefined` means the attribute was absent (or null). */
export interface UserBody {
  userName: string | undefined;
  externalId: string | null | undefined;
  givenName: string | null;
  familyName: string | null;
  formatted: string | null;
  displayName: string | null;
  emails: Email[];
  active: boolean | undefined;
}

/**
 * Reads a User body as connectors send it. Attribute names are matched
 * case-insensitively; null counts as absent; attributes this service does not
 * keep (password, groups, roles, locale, the enterprise extension, …) are
 * ignored and never echoed.
 */
export function parseUserBody(raw: unknown): UserBody {
  if (!isObject(raw)) throw invalidInput('The request body must be a JSON object (a SCIM User).', 'invalidSyntax');
  const m = lowerKeys(raw);
  const userNameRaw = m.get('username');
  const name = m.get('name');
  if (name !== null && name !== undefined && !isObject(name)) throw invalidInput('"name" must be an object.', 'invalidValue');
  const nameKeys = isObject(name) ? lowerKeys(name) : new Map<string, unknown>();
  const active = m.get('active');
  const externalId = m.get('externalid');
  return {
    userName: userNameRaw === null || userNameRaw === undefined ? undefined : userNameValue(userNameRaw),
    externalId: externalId === null || externalId === undefined ? undefined : optionalString(externalId, 'externalId'),
    givenName: optionalString(nameKeys.get('givenname'), 'name.givenName'),
    familyName: optionalString(nameKeys.get('familyname'), 'name.familyName'),
    formatted: optionalString(nameKeys.get('formatted'), 'name.formatted', MAX_FORMATTED),
    displayName: optionalString(m.get('displayname'), 'displayName'),
    emails: emailList(m.get('emails')),
    active: active === null || active === undefined ? undefined : booleanValue(active, 'active'),
  };
}
