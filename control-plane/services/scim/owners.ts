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
export async function refuseLastOwner(deps: ControlPlaneDeps, user: User, how: 'put' | 'patch' | 'delete'): Promise<never> {
  await audit_insert(deps.db, {
    org_id: user.org_id,
    actor: 'scim',
    action: 'scim.user.refused',
    target_type: 'user',
    target_id: user.id,
    detail: { user_name: user.user_name, via: how, reason: 'last_active_owner' },
    now: deps.clock.now(),
  });
  throw invalidInput(
    'This user is the last active owner of the organization; SCIM cannot deactivate or delete them. Make someone else an owner in the console first.',
    'mutability',
  );
}
