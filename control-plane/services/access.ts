import { notFound } from '../../shared/errors.js';
import type { Queryable } from '../db/database.js';
import type { ApiKey, Team, Workspace } from '../domain.js';
import { assertSameOrg, type ConsoleAuth } from '../http/auth.js';
import { api_key_find_by_id } from '../stores/api-keys.js';
import { team_find_by_id } from '../stores/teams.js';
import { workspace_find_by_id } from '../stores/workspaces.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Path ids are checked before they reach SQL: a malformed one is simply an
 * id that names nothing (404), not a uuid cast error (500).
 */
export function normalizeId(raw: string | undefined, what: string): string {
  if (!raw || !UUID.test(raw)) throw notFound(what);
  return raw.toLowerCase();
}

/** How the console caller is named in the audit log. */
export function actorOf(auth: ConsoleAuth): string {
  return `user:${auth.userId}`;
}

/** `/v1/orgs/{org_id}/…`: only the caller's own org exists for them. */
export function assertOwnOrg(auth: ConsoleAuth, rawOrgId: string | undefined): string {
  const orgId = normalizeId(rawOrgId, 'Organization');
  assertSameOrg(auth, orgId, 'Organization');
  return orgId;
}

export async function loadWorkspace(q: Queryable, auth: ConsoleAuth, rawId: string | undefined): Promise<Workspace> {
  const workspace = await workspace_find_by_id(q, normalizeId(rawId, 'Workspace'));
  if (!workspace) throw notFound('Workspace');
  assertSameOrg(auth, workspace.org_id, 'Workspace');
  return workspace;
}

export async function loadTeam(q: Queryable, auth: ConsoleAuth, rawId: string | undefined): Promise<Team> {
  const team = await team_find_by_id(q, normalizeId(rawId, 'Team'));
  if (!team) throw notFound('Team');
  assertSameOrg(auth, team.org_id, 'Team');
  return team;
}

export async function loadKey(q: Queryable, auth: ConsoleAuth, rawId: string | undefined): Promise<ApiKey> {
  const key = await api_key_find_by_id(q, normalizeId(rawId, 'Key'));
  if (!key) throw notFound('Key');
  assertSameOrg(auth, key.org_id, 'Key');
  return key;
}
