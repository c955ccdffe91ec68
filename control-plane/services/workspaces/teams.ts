import { conflict, invalidInput, isUniqueViolation, notFound } from '../../../shared/errors.js';
import type { ModelCatalog } from '../../../shared/models.js';
import type { Queryable } from '../../db/database.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { actorOf, assertAdmin, normalizeId, type ConsoleAuth } from '../auth/console-auth.js';
import { api_key_revoke_personal_in_team } from '../../stores/api-keys.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { member_find } from '../../stores/memberships.js';
import {
  team_insert,
  team_member_add,
  team_member_exists,
  team_member_list,
  team_member_remove,
  team_models_list_unknown,
  team_summary_list_for_workspace,
} from '../../stores/teams.js';
import { loadTeam, loadWorkspace } from '../auth/access.js';

export async function createTeam(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  name: string,
): Promise<{ id: string; name: string }> {
  const now = deps.clock.now();
  try {
    return await deps.db.transaction(async (tx) => {
      const w = await loadWorkspace(tx, auth, rawWorkspaceId);
      assertAdmin(auth);
      const team = await team_insert(tx, { org_id: auth.orgId, workspace_id: w.id, name });
      await audit_insert(tx, {
        org_id: auth.orgId,
        actor: actorOf(auth),
        action: 'team.create',
        target_type: 'team',
        target_id: team.id,
        detail: { workspace_id: w.id, name },
        now,
      });
      return { id: team.id, name: team.name };
    });
  } catch (err) {
    // The unique index compares names case-insensitively, as people read them.
    if (isUniqueViolation(err)) throw conflict(`A team named "${name}" already exists in this workspace.`);
    throw err;
  }
}

/**
 * The workspace's teams with what the Teams page shows: members, the models
 * granted (and which of those the models file no longer has), and the spend
 * of the team's keys.
 */
export async function listTeams(deps: ControlPlaneDeps, auth: ConsoleAuth, rawWorkspaceId: string | undefined) {
  const w = await loadWorkspace(deps.db, auth, rawWorkspaceId);
  const catalog = deps.config.models.models;
  return (await team_summary_list_for_workspace(deps.db, w.id)).map((t) => ({
    id: t.id,
    name: t.name,
    member_count: t.member_count,
    models: t.models,
    stale_models: t.models.filter((a) => !catalog.has(a)),
    spend_usd: t.spend_usd,
  }));
}

/**
 * One line per team grant to an alias the models file does not have. Such a
 * grant is inert (the proxy knows no such model) but comes back to life if
 * the alias is added again, so the operator is told at start.
 */
export async function staleGrantWarnings(q: Queryable, catalog: ModelCatalog): Promise<string[]> {
  const rows = await team_models_list_unknown(q, [...catalog.models.keys()]);
  return rows.map(
    (r) =>
      `warning: team "${r.team_name}" of workspace "${r.workspace_slug}" (org "${r.org_slug}") is granted "${r.alias}", which is not in the models file; ` +
      `it grants nothing now and access returns if the alias is added again. Remove it under Teams → Model access.`,
  );
}

export async function showTeam(deps: ControlPlaneDeps, auth: ConsoleAuth, rawTeamId: string | undefined) {
  const t = await loadTeam(deps.db, auth, rawTeamId);
  return { id: t.id, name: t.name, workspace_id: t.workspace_id };
}

export async function listTeamMembers(deps: ControlPlaneDeps, auth: ConsoleAuth, rawTeamId: string | undefined) {
  const t = await loadTeam(deps.db, auth, rawTeamId);
  return team_member_list(deps.db, t.id);
}

/** Adds an active member of the team's org; adding someone already in the team changes nothing. */
export async function addTeamMember(deps: ControlPlaneDeps, auth: ConsoleAuth, rawTeamId: string | undefined, userId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const team = await loadTeam(tx, auth, rawTeamId);
    assertAdmin(auth);
    const member = await member_find(tx, auth.orgId, normalizeId(userId, 'User'));
    if (!member) throw notFound('User');
    if (member.status !== 'active') {
      throw invalidInput(`user_id: ${member.user_name} is not an active member of the organization.`);
    }
    if (await team_member_exists(tx, team.id, member.user_id)) return;
    await team_member_add(tx, team.id, member.user_id);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'team.member_add',
      target_type: 'team',
      target_id: team.id,
      detail: { team_name: team.name, user_id: member.user_id, user_name: member.user_name },
      now,
    });
  });
}

/**
 * Removes a user from a team and revokes their personal keys in it; team
 * keys survive. Removing someone who is not in the team is a no-op,
 * so a retried DELETE answers the same.
 */
export async function removeTeamMember(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawTeamId: string | undefined,
  rawUserId: string | undefined,
): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const team = await loadTeam(tx, auth, rawTeamId);
    assertAdmin(auth);
    const userId = normalizeId(rawUserId, 'User');
    // The user may already be gone from the org (SCIM delete): removal from the team must still work.
    const removed = await team_member_remove(tx, team.id, userId);
    const revoked = await api_key_revoke_personal_in_team(tx, team.id, userId, now);
    if (!removed && revoked.length === 0) {
      if (!(await member_find(tx, auth.orgId, userId))) throw notFound('User');
      return;
    }
    for (const key of revoked) await change_feed_publish(tx, 'key', key.id);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'team.member_remove',
      target_type: 'team',
      target_id: team.id,
      detail: {
        team_name: team.name,
        user_id: userId,
        revoked_key_ids: revoked.map((k) => k.id),
        revoked_keys: revoked.map((k) => ({ name: k.name, prefix: k.prefix })),
      },
      now,
    });
  });
}
