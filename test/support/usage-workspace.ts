import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../control-plane/db/database.js';

/**
 * A fresh org with one workspace holding `balanceUsd` and one team in it, for
 * tests that settle usage straight against the store; `key` adds a team key
 * with an optional budget and answers its id.
 */
export async function insertUsageWorkspace(db: Queryable, balanceUsd: number) {
  const slug = `s${randomUUID().slice(0, 8)}`;
  const [org] = await db.query<{ id: string }>(`INSERT INTO orgs (slug, name) VALUES ($1, 'o') RETURNING id`, [slug]);
  const [ws] = await db.query<{ id: string }>(`INSERT INTO workspaces (org_id, slug, name, balance_usd) VALUES ($1, $2, 'w', $3) RETURNING id`, [
    org!.id,
    slug,
    balanceUsd,
  ]);
  const workspaceId = ws!.id;
  const [team] = await db.query<{ id: string }>(`INSERT INTO teams (org_id, workspace_id, name) VALUES ($1, $2, 't') RETURNING id`, [
    org!.id,
    workspaceId,
  ]);
  const key = async (budgetUsd: number | null) => {
    const [k] = await db.query<{ id: string }>(
      `INSERT INTO api_keys (org_id, workspace_id, team_id, kind, name, key_hash, prefix, last4, budget_usd)
       VALUES ($1, $2, $3, 'team', 'k', $4, 'p', 'l', $5) RETURNING id`,
      [org!.id, workspaceId, team!.id, randomUUID(), budgetUsd],
    );
    return k!.id;
  };
  return { workspaceId, key };
}
