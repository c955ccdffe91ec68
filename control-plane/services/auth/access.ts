import { notFound } from '../../../shared/errors.js';
import type { Queryable } from '../../db/database.js';
import type { ApiKey, Team, Workspace } from '../../domain.js';
import { assertInOrg, normalizeId, type ConsoleAuth } from './console-auth.js';
import { api_key_find_by_id } from '../../stores/api-keys.js';
import { team_find_by_id } from '../../stores/teams.js';
import { workspace_find_by_id } from '../../stores/workspaces.js';

export async function loadWorkspace(q: Queryable, auth: ConsoleAuth, rawId: string | undefined): Promise<Workspace> {
  const workspace = await workspace_find_by_id(q, normalizeId(rawId, 'Workspace'));
  if (!workspace) throw notFound('Workspace');
  assertInOrg(auth, workspace.org_id, 'Workspace');
  return workspace;
}

export async function loadTeam(q: Queryable, auth: ConsoleAuth, rawId: string | undefined): Promise<Team> {
  const team = await team_find_by_id(q, normalizeId(rawId, 'Team'));
  if (!team) throw notFound('Team');
  assertInOrg(auth, team.org_id, 'Team');
  return team;
}

export async function loadKey(q: Queryable, auth: ConsoleAuth, rawId: string | undefined): Promise<ApiKey> {
  const key = await api_key_find_by_id(q, normalizeId(rawId, 'Key'));
  if (!key) throw notFound('Key');
  assertInOrg(auth, key.org_id, 'Key');
  return key;
}
