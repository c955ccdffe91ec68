import type { Queryable } from '../db/database.js';
import type { Team } from '../domain.js';

const COLUMNS = 'id, org_id, workspace_id, name';

export async function team_insert(q: Queryable, t: { org_id: string; workspace_id: string; name: string }): Promise<Team> {
  const [row] = await q.query<Team>(`INSERT INTO teams (org_id, workspace_id, name) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`, [
    t.org_id,
    t.workspace_id,
    t.name,
  ]);
  return row!;
}

export async function team_find_by_id(q: Queryable, id: string): Promise<Team | undefined> {
  const [row] = await q.query<Team>(`SELECT ${COLUMNS} FROM teams WHERE id = $1`, [id]);
  return row;
}

export async function team_member_add(q: Queryable, teamId: string, userId: string): Promise<void> {
  await q.query(`INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [teamId, userId]);
}

export async function team_member_remove(q: Queryable, teamId: string, userId: string): Promise<boolean> {
  const rows = await q.query(`DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 RETURNING user_id`, [teamId, userId]);
  return rows.length > 0;
}

export async function team_member_exists(q: Queryable, teamId: string, userId: string): Promise<boolean> {
  const rows = await q.query(`SELECT 1 FROM team_members WHERE team_id = $1 AND user_id = $2`, [teamId, userId]);
  return rows.length > 0;
}

/**
 * Same as team_member_exists, holding a share lock on the row until the
 * transaction ends: a concurrent removal waits, then revokes what was created.
 */
export async function team_member_lock(q: Queryable, teamId: string, userId: string): Promise<boolean> {
  const rows = await q.query(`SELECT 1 FROM team_members WHERE team_id = $1 AND user_id = $2 FOR SHARE`, [teamId, userId]);
  return rows.length > 0;
}

export async function team_member_list(q: Queryable, teamId: string): Promise<{ user_id: string; user_name: string }[]> {
  return q.query(
    `SELECT tm.user_id, u.user_name FROM team_members tm JOIN users u ON u.id = tm.user_id
      WHERE tm.team_id = $1 ORDER BY lower(u.user_name)`,
    [teamId],
  );
}

export async function team_models_replace(q: Queryable, teamId: string, aliases: readonly string[]): Promise<void> {
  await q.query(`DELETE FROM team_models WHERE team_id = $1`, [teamId]);
  if (aliases.length) {
    await q.query(`INSERT INTO team_models (team_id, alias) SELECT $1, unnest($2::text[])`, [teamId, aliases]);
  }
}

export async function team_models_list(q: Queryable, teamId: string): Promise<string[]> {
  const rows = await q.query<{ alias: string }>(`SELECT alias FROM team_models WHERE team_id = $1 ORDER BY alias`, [teamId]);
  return rows.map((r) => r.alias);
}

export interface TeamSummaryRow {
  id: string;
  name: string;
  member_count: number;
  spend_usd: number;
  models: string[];
}

/** The Teams page: each team with its member count, model grants and what its keys have spent. */
export async function team_summary_list_for_workspace(q: Queryable, workspaceId: string): Promise<TeamSummaryRow[]> {
  return q.query<TeamSummaryRow>(
    `SELECT t.id, t.name,
            (SELECT count(*)::int FROM team_members tm WHERE tm.team_id = t.id) AS member_count,
            (SELECT COALESCE(sum(k.spend_usd), 0)::float8 FROM api_keys k WHERE k.team_id = t.id) AS spend_usd,
            COALESCE((SELECT array_agg(m.alias ORDER BY m.alias) FROM team_models m WHERE m.team_id = t.id), '{}'::text[]) AS models
       FROM teams t WHERE t.workspace_id = $1 ORDER BY lower(t.name)`,
    [workspaceId],
  );
}

/** Grants to aliases the models file no longer has, across every org: what start-up warns about. */
export async function team_models_list_unknown(
  q: Queryable,
  known: readonly string[],
): Promise<{ org_slug: string; workspace_slug: string; team_name: string; alias: string }[]> {
  return q.query(
    `SELECT o.slug AS org_slug, w.slug AS workspace_slug, t.name AS team_name, m.alias
       FROM team_models m JOIN teams t ON t.id = m.team_id JOIN workspaces w ON w.id = t.workspace_id JOIN orgs o ON o.id = t.org_id
      WHERE NOT (m.alias = ANY($1::text[]))
      ORDER BY o.slug, w.slug, lower(t.name), m.alias`,
    [known],
  );
}
