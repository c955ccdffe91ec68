import { invalidInput } from '../../../shared/errors.js';
import type { Queryable } from '../../db/database.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { User } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { membership_find, membership_lock_active_owners } from '../../stores/memberships.js';

/**
 * The console keeps one active owner in every organization (services/orgs/members.ts);
 * SCIM must not bypass that: a provisioning token is an owner-or-admin
 * secret, and an admin holding one could otherwise deactivate or delete
 * every owner and be left the most powerful person in the org.
 */
export async function isLastActiveOwner(tx: Queryable, orgId: string, userId: string): Promise<boolean> {
  const membership = await membership_find(tx, orgId, userId);
  if (membership?.role !== 'owner' || membership.status !== 'active') return false;
  // Locks the owner rows so two concurrent deprovisionings cannot both see "another owner remains".
  const owners = await membership_lock_active_owners(tx, orgId);
  return owners.every((id) => id === userId);
}

/**
 * Records the refusal in its own transaction (the refused one rolled back)
 * and answers 400 `mutability`: RFC 7644 §3.12's type for a change the
 * resource's current state does not allow.
 */
async function refuse(deps: ControlPlaneDeps, user: User, detail: Record<string, unknown>, message: string): Promise<never> {
  await audit_insert(deps.db, {
    org_id: user.org_id,
    actor: 'scim',
    action: 'scim.user.refused',
    target_type: 'user',
    target_id: user.id,
    detail: { user_name: user.user_name, ...detail },
    now: deps.clock.now(),
  });
  throw invalidInput(message, 'mutability');
}

export function refuseLastOwner(deps: ControlPlaneDeps, user: User, how: 'put' | 'patch' | 'delete'): Promise<never> {
  return refuse(
    deps,
    user,
    { via: how, reason: 'last_active_owner' },
    'This user is the last active owner of the organization; SCIM cannot deactivate or delete them. Make someone else an owner in the console first.',
  );
}

/** What names a person to single sign-on: SCIM may not change these on an owner or admin (docs/security.md, round two). */
export const IDENTITY_FIELDS: readonly string[] = ['external_id', 'emails'];

/** The owner or admin role of a user whose identity fields a change touches, or undefined when SCIM may make it. */
export async function privilegedIdentityChange(
  tx: Queryable,
  orgId: string,
  userId: string,
  changed: string[],
): Promise<'owner' | 'admin' | undefined> {
  if (!changed.some((f) => IDENTITY_FIELDS.includes(f))) return undefined;
  const role = (await membership_find(tx, orgId, userId))?.role;
  return role === 'owner' || role === 'admin' ? role : undefined;
}

/**
 * An admin holding the provisioning token could otherwise set an owner's
 * externalId to their own identity provider login and be signed in as the owner.
 */
export function refuseIdentityChange(deps: ControlPlaneDeps, user: User, how: 'put' | 'patch', role: string, changed: string[]): Promise<never> {
  const fields = changed.filter((f) => IDENTITY_FIELDS.includes(f));
  return refuse(
    deps,
    user,
    { via: how, reason: 'privileged_identity', role, fields },
    `This user is an ${role} of the organization; SCIM cannot change their ${fields.map((f) => (f === 'external_id' ? 'externalId' : f)).join(' or ')}. ` +
      'Make them a member in the console first, or have them change it themselves.',
  );
}
