import { AppError, conflict, invalidInput, isUniqueViolation } from '../../../shared/errors.js';
import type { Queryable } from '../../db/database.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { User } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { membership_find, membership_insert, membership_set_status } from '../../stores/memberships.js';
import { session_revoke_all_for_user } from '../../stores/sessions.js';
import { endSessions } from '../gateway-signin/device-flow.js';
import {
  isStatementTimeout,
  statement_timeout_set_local,
  user_delete,
  user_find_by_id,
  user_find_by_user_name,
  user_insert,
  user_lock_by_id,
  user_search,
  user_update,
} from '../../stores/users.js';
import { parseFilter } from './filter.js';
import { isLastActiveOwner, privilegedIdentityChange, refuseIdentityChange, refuseLastOwner } from './owners.js';
import { applyPatch } from './patch.js';
import { canonicalEmail, parseUserBody, storedFormatted, type MutableUser } from './resource.js';

/**
 * The User lifecycle as the identity provider drives it (docs/scim.md). Every
 * change is one transaction holding the user row, the membership, the
 * session revocations and the audit row, so a deactivation has taken effect
 * before the connector hears 200. `orgId` is always the provisioning token's
 * organization, never an id read from the URL.
 */
const ACTOR = 'scim';
export const MAX_PAGE_SIZE = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const userNotFound = () => new AppError('not_found', 'No such user.');

/** A malformed id cannot name a user: 404 without asking the database (which would reject it). */
function assertId(id: string): void {
  if (!UUID.test(id)) throw userNotFound();
}

const FIELDS = ['external_id', 'given_name', 'family_name', 'name_formatted', 'display_name', 'emails', 'active'] as const;

function changedFields(before: MutableUser, after: MutableUser): string[] {
  const canonical = (u: MutableUser, f: (typeof FIELDS)[number]) => JSON.stringify(f === 'emails' ? u.emails.map(canonicalEmail) : u[f]);
  return FIELDS.filter((f) => canonical(before, f) !== canonical(after, f));
}

export async function createUser(deps: ControlPlaneDeps, orgId: string, raw: unknown): Promise<User> {
  const body = parseUserBody(raw);
  if (body.userName === undefined) throw invalidInput('"userName" is required.', 'invalidValue');
  const userName = body.userName;
  const now = deps.clock.now();
  const duplicate = () => conflict(`A user with userName "${userName}" already exists in this organization.`, 'uniqueness');
  try {
    return await deps.db.transaction(async (tx) => {
      if (await user_find_by_user_name(tx, orgId, userName)) throw duplicate();
      const active = body.active ?? true;
      const user = await user_insert(
        tx,
        orgId,
        'scim',
        {
          user_name: userName,
          external_id: body.externalId === '' ? null : (body.externalId ?? null),
          given_name: body.givenName,
          family_name: body.familyName,
          name_formatted: storedFormatted({ given_name: body.givenName, family_name: body.familyName, name_formatted: body.formatted }),
          display_name: body.displayName,
          emails: body.emails,
          active,
        },
        now,
      );
      // Spec 3: reconciled into a membership with the default member role.
      await membership_insert(tx, { org_id: orgId, user_id: user.id, role: 'member', status: active ? 'active' : 'inactive' });
      await audit_insert(tx, {
        org_id: orgId,
        actor: ACTOR,
        action: 'scim.user.create',
        target_type: 'user',
        target_id: user.id,
        detail: { user_name: user.user_name, active },
        now,
      });
      return user;
    });
  } catch (err) {
    // Two creates racing past the lookup meet at the unique index on lower(user_name).
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function getUser(deps: ControlPlaneDeps, orgId: string, id: string): Promise<User> {
  assertId(id);
  const user = await user_find_by_id(deps.db, orgId, id);
  if (!user) throw userNotFound();
  return user;
}

export interface ListQuery {
  filter: string | undefined;
  startIndex: string | undefined;
  count: string | undefined;
}

function integerParam(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\s*-?\d{1,15}\s*$/.test(raw)) throw invalidInput(`"${name}" must be an integer.`, 'invalidValue');
  return Number(raw);
}

export async function listUsers(
  deps: ControlPlaneDeps,
  orgId: string,
  query: ListQuery,
): Promise<{ total: number; startIndex: number; users: User[] }> {
  const filter = query.filter === undefined ? undefined : parseFilter(query.filter);
  // RFC 7644 §3.4.2.4: startIndex < 1 means 1, a negative count means 0.
  const startIndex = Math.max(1, integerParam(query.startIndex, 'startIndex') ?? 1);
  const count = Math.min(MAX_PAGE_SIZE, Math.max(0, integerParam(query.count, 'count') ?? MAX_PAGE_SIZE));
  const limitMs = deps.config.limits.scimSearchTimeoutMs;
  try {
    // Under a time limit, so one tenant's expensive filter cannot hold the shared store (docs/security.md).
    const result = await deps.db.transaction(async (tx) => {
      await statement_timeout_set_local(tx, limitMs);
      return user_search(tx, orgId, filter, startIndex - 1, count);
    });
    return { total: result.total, startIndex, users: result.users };
  } catch (err) {
    if (isStatementTimeout(err)) throw invalidInput(`The filter took more than ${limitMs} ms to evaluate; use a narrower one.`, 'tooMany');
    throw err;
  }
}

async function saveUser(deps: ControlPlaneDeps, tx: Queryable, before: User, after: MutableUser, how: string): Promise<User> {
  const now = deps.clock.now();
  const changed = changedFields(before, after);
  const updated = (await user_update(tx, before.org_id, before.id, after, now))!;
  let action = 'scim.user.update';
  if (before.active !== after.active) {
    action = after.active ? 'scim.user.reactivate' : 'scim.user.deactivate';
    const status = after.active ? 'active' : 'inactive';
    // The role is never touched: a reactivated user keeps the role the console gave it.
    if (await membership_find(tx, before.org_id, before.id)) await membership_set_status(tx, before.org_id, before.id, status, now);
    else await membership_insert(tx, { org_id: before.org_id, user_id: before.id, role: 'member', status });
    if (!after.active) {
      await session_revoke_all_for_user(tx, before.org_id, before.id, now);
      // Claude Code sign-ins are sessions too: their keys are revoked on every proxy through the change feed.
      await endSessions(tx, before.org_id, { userId: before.id }, 'deactivated', now);
    }
    await change_feed_publish(tx, 'user', before.id);
  }
  await audit_insert(tx, {
    org_id: before.org_id,
    actor: ACTOR,
    action,
    target_type: 'user',
    target_id: before.id,
    detail: { user_name: before.user_name, via: how, changed },
    now,
  });
  return updated;
}

async function updateLocked(
  deps: ControlPlaneDeps,
  orgId: string,
  id: string,
  how: 'put' | 'patch',
  next: (current: User) => MutableUser,
): Promise<User> {
  assertId(id);
  type Outcome = { saved: User } | { lastOwner: User } | { privileged: User; role: string; changed: string[] };
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const current = await user_lock_by_id(tx, orgId, id);
    if (!current) throw userNotFound();
    const after = next(current);
    if (current.active && !after.active && (await isLastActiveOwner(tx, orgId, id))) return { lastOwner: current };
    const changed = changedFields(current, after);
    const role = await privilegedIdentityChange(tx, orgId, id, changed);
    if (role) return { privileged: current, role, changed };
    return { saved: await saveUser(deps, tx, current, { ...after, name_formatted: storedFormatted(after) }, how) };
  });
  if ('lastOwner' in outcome) return refuseLastOwner(deps, outcome.lastOwner, how);
  if ('privileged' in outcome) return refuseIdentityChange(deps, outcome.privileged, how, outcome.role, outcome.changed);
  return outcome.saved;
}

/**
 * PUT replaces name, displayName and emails (absent means cleared). userName
 * is required like on create (RFC 7644 §3.5.1: a PUT lacking a required
 * attribute is refused whole, so a misspelt body never deactivates anyone)
 * and keeps its original value: it is the IdP's unique identifier; externalId and active are kept
 * when the body leaves them out, because losing either would unlink the SSO
 * identity or change access without the connector asking for it.
 */
export async function replaceUser(deps: ControlPlaneDeps, orgId: string, id: string, raw: unknown): Promise<User> {
  const body = parseUserBody(raw);
  if (body.userName === undefined) throw invalidInput('"userName" is required in a PUT; nothing was changed.', 'invalidValue');
  return updateLocked(deps, orgId, id, 'put', (current) => ({
    external_id: body.externalId === undefined ? current.external_id : body.externalId === '' ? null : body.externalId,
    given_name: body.givenName,
    family_name: body.familyName,
    name_formatted: body.formatted,
    display_name: body.displayName,
    emails: body.emails,
    active: body.active ?? current.active,
  }));
}

export async function patchUser(deps: ControlPlaneDeps, orgId: string, id: string, raw: unknown): Promise<User> {
  assertId(id);
  return updateLocked(deps, orgId, id, 'patch', (current) => applyPatch(current, raw));
}

/** The row goes; memberships, sessions and team memberships cascade. API keys stay: deprovisioning a user never revokes keys. */
export async function deleteUser(deps: ControlPlaneDeps, orgId: string, id: string): Promise<void> {
  assertId(id);
  const now = deps.clock.now();
  const lastOwner = await deps.db.transaction(async (tx): Promise<User | undefined> => {
    const current = await user_lock_by_id(tx, orgId, id);
    if (!current) throw userNotFound();
    if (await isLastActiveOwner(tx, orgId, id)) return current;
    await endSessions(tx, orgId, { userId: id }, 'deleted', now);
    await user_delete(tx, orgId, id);
    await change_feed_publish(tx, 'user', id);
    await audit_insert(tx, {
      org_id: orgId,
      actor: ACTOR,
      action: 'scim.user.delete',
      target_type: 'user',
      target_id: id,
      detail: { user_name: current.user_name },
      now,
    });
    return undefined;
  });
  if (lastOwner) await refuseLastOwner(deps, lastOwner, 'delete');
}
