import { conflict, forbidden, notFound } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { Role } from '../../domain.js';
import { actorOf, assertAdmin, assertOwnOrg, normalizeId, type ConsoleAuth } from '../auth/console-auth.js';
import { api_key_revoke_personal_of_user } from '../../stores/api-keys.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { member_find, member_list, membership_lock_active_owners, membership_set_role, type MemberRow } from '../../stores/memberships.js';

/** One row of Settings → Members. */
export interface MemberView {
  user_id: string;
  user_name: string;
  /** The person's name as the IdP sent it (displayName, else given + family), for Settings → Members. */
  name: string | null;
  email: string | null;
  role: Role;
  status: MemberRow['status'];
  source: MemberRow['source'];
}

function memberView(m: MemberRow): MemberView {
  const name = m.display_name || [m.given_name, m.family_name].filter(Boolean).join(' ') || null;
  return { user_id: m.user_id, user_name: m.user_name, name, email: m.email, role: m.role, status: m.status, source: m.source };
}

export async function listMembers(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId: string | undefined): Promise<MemberView[]> {
  assertOwnOrg(auth, rawOrgId);
  return (await member_list(deps.db, auth.orgId)).map(memberView);
}

/**
 * Changes a member's role. The owner role is granted and taken away only by
 * an owner, and the org always keeps one active owner: otherwise nobody could
 * ever manage owners again.
 */
export async function changeMemberRole(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  rawUserId: string | undefined,
  role: Role,
): Promise<MemberView> {
  assertOwnOrg(auth, rawOrgId);
  assertAdmin(auth);
  const userId = normalizeId(rawUserId, 'Member');
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const member = await member_find(tx, auth.orgId, userId);
    if (!member) throw notFound('Member');
    if (member.role === role) return memberView(member);
    if ((member.role === 'owner' || role === 'owner') && auth.role !== 'owner') {
      throw forbidden('Only an owner may grant or remove the owner role.');
    }
    if (member.role === 'owner' && member.status === 'active') {
      const owners = await membership_lock_active_owners(tx, auth.orgId);
      if (owners.filter((id) => id !== userId).length === 0) {
        throw conflict('This is the last active owner of the organization; make someone else an owner first.');
      }
    }
    await membership_set_role(tx, auth.orgId, userId, role, now);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'member.role_change',
      target_type: 'user',
      target_id: userId,
      detail: { user_name: member.user_name, from: member.role, to: role },
      now,
    });
    return { ...memberView(member), role };
  });
}

/**
 * Revokes every personal key of a deactivated member, in all teams (admin,
 * audited). Deactivation ends membership and sessions but not keys; this is
 * the admin's one action for the personal keys the person left behind.
 */
export async function revokePersonalKeys(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  rawUserId: string | undefined,
): Promise<{ revoked: number }> {
  assertOwnOrg(auth, rawOrgId);
  assertAdmin(auth);
  const userId = normalizeId(rawUserId, 'Member');
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const member = await member_find(tx, auth.orgId, userId);
    if (!member) throw notFound('Member');
    if (member.status === 'active') {
      throw conflict('This member is active: revoke their keys one by one, or remove them from the team (which ends their personal keys there).');
    }
    const revoked = await api_key_revoke_personal_of_user(tx, auth.orgId, userId, now);
    for (const key of revoked) await change_feed_publish(tx, 'key', key.id);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'member.personal_keys_revoke',
      target_type: 'user',
      target_id: userId,
      detail: {
        user_name: member.user_name,
        revoked_key_ids: revoked.map((k) => k.id),
        revoked_keys: revoked.map((k) => ({ team_id: k.team_id, name: k.name, prefix: k.prefix })),
      },
      now,
    });
    return { revoked: revoked.length };
  });
}
