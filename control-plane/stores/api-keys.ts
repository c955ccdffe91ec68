import type { Queryable } from '../db/database.js';
import type { ResolvedKey } from '../../shared/contract/keys.js';
import type { ApiKey } from '../domain.js';
import { keyBudgetSelect, type KeyBudgetRow } from './key-budget.js';

const COLUMNS = `id, org_id, workspace_id, team_id, kind, owner_user_id, name, prefix, last4,
  budget_usd::float8 AS budget_usd, budget_period, period_spend_usd::float8 AS period_spend_usd, period_started_at,
  rpm, tpm, expires_at, spend_usd::float8 AS spend_usd, previous_expires_at,
  last_used_at, revoked_at, created_at`;

export type NewApiKey = Pick<
  ApiKey,
  'org_id' | 'workspace_id' | 'team_id' | 'kind' | 'owner_user_id' | 'name' | 'prefix' | 'last4' | 'budget_usd' | 'rpm' | 'tpm' | 'expires_at'
> & { budget_period?: ApiKey['budget_period'] | undefined; key_hash: string; created_by: string | null; now: Date };

export async function api_key_insert(q: Queryable, k: NewApiKey): Promise<ApiKey> {
  const [row] = await q.query<ApiKey>(
    `INSERT INTO api_keys (org_id, workspace_id, team_id, kind, owner_user_id, name, key_hash, prefix, last4,
                           budget_usd, rpm, tpm, expires_at, created_by, created_at, budget_changed_at, budget_period)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16) RETURNING ${COLUMNS}`,
    [
      k.org_id,
      k.workspace_id,
      k.team_id,
      k.kind,
      k.owner_user_id,
      k.name,
      k.key_hash,
      k.prefix,
      k.last4,
      k.budget_usd,
      k.rpm,
      k.tpm,
      k.expires_at,
      k.created_by,
      k.now,
      k.budget_period ?? null,
    ],
  );
  return row!;
}

export async function api_key_find_by_id(q: Queryable, id: string): Promise<ApiKey | undefined> {
  const [row] = await q.query<ApiKey>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
  return row;
}

export async function api_key_find_by_hash(q: Queryable, keyHash: string): Promise<ApiKey | undefined> {
  const [row] = await q.query<ApiKey>(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
  return row;
}

export async function api_key_list_for_team(q: Queryable, teamId: string): Promise<ApiKey[]> {
  return q.query<ApiKey>(`SELECT ${COLUMNS} FROM api_keys WHERE team_id = $1 ORDER BY created_at, id`, [teamId]);
}

/**
 * A workspace's keys across its teams, newest team first by name; narrowed to
 * one team, or to the teams a member belongs to (a member sees no other team's keys).
 */
export async function api_key_list_for_workspace(
  q: Queryable,
  workspaceId: string,
  filter: { teamId?: string | undefined; memberUserId?: string | undefined },
): Promise<(ApiKey & { team_name: string })[]> {
  const params: unknown[] = [workspaceId];
  let where = 'k.workspace_id = $1';
  if (filter.teamId) {
    params.push(filter.teamId);
    where += ` AND k.team_id = $${params.length}`;
  }
  if (filter.memberUserId) {
    params.push(filter.memberUserId);
    where += ` AND EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = k.team_id AND tm.user_id = $${params.length})`;
  }
  // The same columns, of the key rather than of the team joined to it.
  const columns = COLUMNS.split(',')
    .map((c) => `k.${c.trim()}`)
    .join(', ');
  return q.query(
    `SELECT ${columns}, t.name AS team_name FROM api_keys k JOIN teams t ON t.id = k.team_id
      WHERE ${where} ORDER BY lower(t.name), k.created_at, k.id`,
    params,
  );
}

/** What a PATCH may change; an absent field stays as it is, a null clears it. */
export type KeyChanges = Partial<Pick<ApiKey, 'name' | 'budget_usd' | 'budget_period' | 'rpm' | 'tpm' | 'expires_at'>>;

const CHANGEABLE = ['name', 'budget_usd', 'budget_period', 'rpm', 'tpm', 'expires_at'] as const;

/**
 * Applies a PATCH. A change of budget or period stamps budget_changed_at (the
 * proxies order budget snapshots by it); a change of period starts the
 * period's count afresh from the next settlement.
 */
export async function api_key_update(q: Queryable, id: string, changes: KeyChanges, now: Date): Promise<ApiKey | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [id, now];
  for (const field of CHANGEABLE) {
    if (!(field in changes)) continue;
    params.push(changes[field]);
    sets.push(`${field} = $${params.length}`);
  }
  if ('budget_usd' in changes || 'budget_period' in changes) sets.push('budget_changed_at = $2');
  if ('budget_period' in changes) {
    // A new period counts what the ledger settled since the period began (settlement time, not hold time:
    // the ledger keeps no hold time); the same period keeps its count.
    const period = `$${CHANGEABLE.filter((f) => f in changes).indexOf('budget_period') + 3}::text`;
    const start = `date_trunc(${period}, $2::timestamptz, 'UTC')`;
    sets.push(`period_started_at = CASE WHEN budget_period IS NOT DISTINCT FROM ${period} THEN period_started_at
                                        WHEN ${period} IS NULL THEN NULL ELSE ${start} END`);
    sets.push(`period_spend_usd = CASE WHEN budget_period IS NOT DISTINCT FROM ${period} THEN period_spend_usd
                                       WHEN ${period} IS NULL THEN 0
                                       ELSE (SELECT COALESCE(sum(-l.amount_usd), 0) FROM ledger_entries l
                                              WHERE l.workspace_id = api_keys.workspace_id AND l.key_id = $1 AND l.kind = 'usage' AND l.created_at >= ${start}) END`);
  }
  if (!sets.length) return api_key_find_by_id(q, id);
  const [row] = await q.query<ApiKey>(
    // $2 (now) is typed here too, for a change that does not otherwise use it.
    `UPDATE api_keys SET ${sets.join(', ')} WHERE id = $1 AND $2::timestamptz IS NOT NULL RETURNING ${COLUMNS}`,
    params,
  );
  return row;
}

/** A new secret for the key; the one it replaces keeps working until `previousExpiresAt`. */
export async function api_key_rotate(
  q: Queryable,
  id: string,
  secret: { key_hash: string; prefix: string; last4: string },
  previousExpiresAt: Date,
): Promise<ApiKey | undefined> {
  const [row] = await q.query<ApiKey>(
    `UPDATE api_keys SET previous_key_hash = key_hash, previous_expires_at = $5, key_hash = $2, prefix = $3, last4 = $4
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, secret.key_hash, secret.prefix, secret.last4, previousExpiresAt],
  );
  return row;
}

export async function api_key_revoke(q: Queryable, id: string, now: Date): Promise<ApiKey | undefined> {
  const [row] = await q.query<ApiKey>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${COLUMNS}`, [id, now]);
  return row;
}

/** A personal key dies with its owner's team membership. */
export async function api_key_revoke_personal_in_team(q: Queryable, teamId: string, ownerUserId: string, now: Date): Promise<ApiKey[]> {
  return q.query<ApiKey>(
    `UPDATE api_keys SET revoked_at = $3
      WHERE team_id = $1 AND owner_user_id = $2 AND kind = 'personal' AND revoked_at IS NULL RETURNING ${COLUMNS}`,
    [teamId, ownerUserId, now],
  );
}

/** Every live personal key a user owns in an org, in all its teams: an admin's clean-up after deprovisioning. */
export async function api_key_revoke_personal_of_user(q: Queryable, orgId: string, ownerUserId: string, now: Date): Promise<ApiKey[]> {
  return q.query<ApiKey>(
    `UPDATE api_keys SET revoked_at = $3
      WHERE org_id = $1 AND owner_user_id = $2 AND kind = 'personal' AND revoked_at IS NULL RETURNING ${COLUMNS}`,
    [orgId, ownerUserId, now],
  );
}

/** What the proxy needs to decide on a key, in integer micro-dollars (floored: never more than there is). */
export type KeyResolutionRow = Pick<
  ApiKey,
  'id' | 'org_id' | 'workspace_id' | 'team_id' | 'owner_user_id' | 'revoked_at' | 'expires_at' | 'rpm' | 'tpm'
> &
  Pick<ResolvedKey, 'workspace_slug' | 'key_version' | 'balance_micros' | 'balance_version' | 'models'> &
  KeyBudgetRow;

/**
 * The key whose current secret, or whose rotated-out secret still in its
 * grace, has this hash. The old secret's answer expires when its grace ends
 * (or earlier, with the key), so every proxy stops it then without an event.
 */
export async function api_key_resolve(q: Queryable, keyHash: string, now: Date): Promise<KeyResolutionRow | undefined> {
  const [row] = await q.query<KeyResolutionRow>(
    `SELECT k.id, k.org_id, k.workspace_id, w.slug AS workspace_slug, k.team_id, k.owner_user_id, k.revoked_at,
            CASE WHEN k.key_hash = $1 THEN k.expires_at
                 ELSE LEAST(k.expires_at, k.previous_expires_at) END AS expires_at,
            k.rpm, k.tpm,
            ${keyBudgetSelect('k', '$2')},
            k.version::float8 AS key_version,
            floor(w.balance_usd * 1000000)::float8 AS balance_micros,
            w.balance_version::float8 AS balance_version,
            COALESCE((SELECT array_agg(m.alias ORDER BY m.alias) FROM team_models m WHERE m.team_id = k.team_id), '{}'::text[]) AS models
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.key_hash = $1 OR (k.previous_key_hash = $1 AND k.previous_expires_at > $2)`,
    [keyHash, now],
  );
  return row;
}
