import type { RefusalReason } from '../../shared/contract/usage.js';
import type { Queryable } from '../db/database.js';

export type UsageGrouping = 'model' | 'key' | 'team' | 'user' | 'deployment' | 'reason';
export type UsageGranularity = 'day' | 'hour';

export interface UsageFilter {
  workspace_id: string;
  from: Date;
  to: Date;
  key_id?: string;
  team_id?: string;
  model?: string;
  user_id?: string;
  /** Only the keys of these teams (a member's view); undefined = the whole workspace. */
  team_ids?: string[];
  errors_only?: boolean;
  /** Only calls Tollgate refused (true), or only calls it served (false); undefined = both. */
  refused?: boolean;
  /** Only refusals for this reason. */
  reason?: RefusalReason;
}

/** The group column for each grouping, from a fixed list: nothing from a request reaches the SQL text. */
const GROUP_COLUMN: Record<UsageGrouping, string> = {
  model: 'l.model',
  key: 'l.key_id::text',
  team: 'k.team_id::text',
  user: 'k.owner_user_id::text',
  deployment: 'l.deployment',
  reason: 'l.refusal_reason',
};

/**
 * Error: a served call whose client got a status of 400 or more (provider
 * refusals, failures, cut answers). Tollgate's own refusals are counted apart.
 */
const IS_ERROR = 'l.status >= 400 AND l.refusal_reason IS NULL';

function where(f: UsageFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [f.workspace_id, f.from, f.to];
  const clauses = [`l.workspace_id = $1`, `l.kind = 'usage'`, `l.created_at >= $2`, `l.created_at < $3`];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(clause(`$${params.length}`));
  };
  if (f.key_id) add((p) => `l.key_id = ${p}::uuid`, f.key_id);
  if (f.team_id) add((p) => `k.team_id = ${p}::uuid`, f.team_id);
  if (f.model) add((p) => `l.model = ${p}`, f.model);
  if (f.user_id) add((p) => `k.owner_user_id = ${p}::uuid`, f.user_id);
  if (f.team_ids) add((p) => `k.team_id = ANY(${p}::uuid[])`, f.team_ids);
  if (f.errors_only) clauses.push(IS_ERROR);
  if (f.refused !== undefined) clauses.push(f.refused ? 'l.refusal_reason IS NOT NULL' : 'l.refusal_reason IS NULL');
  if (f.reason) add((p) => `l.refusal_reason = ${p}`, f.reason);
  return { sql: clauses.join(' AND '), params };
}

export interface UsageBucketRow {
  bucket: Date;
  group_id: string | null;
  spend_usd: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cache_saved_usd: number;
  errors: number;
  refused: number;
}

/** Usage per UTC day or hour and per group, oldest bucket first. */
export async function usage_aggregate(
  q: Queryable,
  f: UsageFilter,
  granularity: UsageGranularity,
  grouping: UsageGrouping,
): Promise<UsageBucketRow[]> {
  const w = where(f);
  w.params.push(granularity === 'day' ? '1 day' : '1 hour');
  // date_bin from a UTC midnight gives UTC days and hours without a time-zone conversion per row.
  return q.query<UsageBucketRow>(
    `SELECT date_bin($${w.params.length}::interval, l.created_at, '2000-01-01T00:00:00Z') AS bucket, ${GROUP_COLUMN[grouping]} AS group_id,
            COALESCE(sum(-l.amount_usd), 0)::float8 AS spend_usd, count(*) FILTER (WHERE l.refusal_reason IS NULL)::int AS requests,
            COALESCE(sum(l.input_tokens), 0)::float8 AS input_tokens, COALESCE(sum(l.output_tokens), 0)::float8 AS output_tokens,
            COALESCE(sum(l.cache_read_tokens), 0)::float8 AS cache_read_tokens, COALESCE(sum(l.cache_write_tokens), 0)::float8 AS cache_write_tokens,
            COALESCE(sum(l.cache_saved_usd), 0)::float8 AS cache_saved_usd,
            count(*) FILTER (WHERE ${IS_ERROR})::int AS errors, COALESCE(sum(l.refused_count), 0)::int AS refused
       FROM ledger_entries l LEFT JOIN api_keys k ON k.id = l.key_id
      WHERE ${w.sql}
      GROUP BY 1, 2 ORDER BY 1, 2`,
    w.params,
  );
}

export interface UsageRequestRow {
  id: string;
  /** When the control plane recorded the call. */
  created_at: Date;
  /** When the proxy received it (created_at for rows that do not say). */
  started_at: Date;
  request_id: string;
  key_id: string | null;
  key_name: string | null;
  key_prefix: string | null;
  team_id: string | null;
  team_name: string | null;
  user_id: string | null;
  user_name: string | null;
  model: string | null;
  format: string | null;
  status: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number;
  latency_ms: number | null;
  deployment: string | null;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  web_search_requests: number;
  cache_saved_usd: number;
  /** Set on a row of refused calls: why, and how many calls it stands for. */
  refusal_reason: RefusalReason | null;
  refused_count: number | null;
}

/**
 * Usage rows newest recorded first, the calls of one batch by when they
 * started (rows are recorded in batches, their start shown); with `after_id` (the last row of the previous
 * page), the rows that come after it in that order. The row's own time is
 * read in SQL, so no precision is lost on the way through a cursor.
 */
export async function usage_request_list(q: Queryable, f: UsageFilter, page: { limit: number; after_id?: string }): Promise<UsageRequestRow[]> {
  const w = where(f);
  let keyset = '';
  if (page.after_id) {
    w.params.push(page.after_id);
    const p = `$${w.params.length}::bigint`;
    // The cursor row must be one of this workspace's: another tenant's id finds nothing here, and so reveals nothing of when its rows were written.
    keyset =
      ` AND (l.created_at, COALESCE(l.started_at, l.created_at), l.id) < ` +
      `(SELECT c.created_at, COALESCE(c.started_at, c.created_at), c.id FROM ledger_entries c WHERE c.id = ${p} AND c.workspace_id = $1 AND c.kind = 'usage')`;
  }
  w.params.push(page.limit);
  return q.query<UsageRequestRow>(
    `SELECT l.id::text AS id, l.created_at, COALESCE(l.started_at, l.created_at) AS started_at, l.request_id, l.key_id, k.name AS key_name, k.prefix AS key_prefix,
            k.team_id, t.name AS team_name, k.owner_user_id AS user_id, u.user_name,
            l.model, l.format, l.status, l.input_tokens, l.output_tokens, (-l.amount_usd)::float8 AS cost_usd, l.latency_ms, l.deployment,
            l.cache_read_tokens, l.cache_write_tokens, l.cache_write_1h_tokens, l.web_search_requests, l.cache_saved_usd::float8 AS cache_saved_usd,
            l.refusal_reason, l.refused_count
       FROM ledger_entries l
       LEFT JOIN api_keys k ON k.id = l.key_id
       LEFT JOIN teams t ON t.id = k.team_id
       LEFT JOIN users u ON u.id = k.owner_user_id
      WHERE ${w.sql}${keyset}
      ORDER BY l.created_at DESC, COALESCE(l.started_at, l.created_at) DESC, l.id DESC
      LIMIT $${w.params.length}`,
    w.params,
  );
}

export interface UsageLabelRow {
  kind: 'key' | 'team' | 'user';
  id: string;
  label: string;
}

/** Names for the keys, teams and key owners of a workspace, to label groups. */
export async function usage_labels(q: Queryable, workspaceId: string): Promise<UsageLabelRow[]> {
  return q.query<UsageLabelRow>(
    `SELECT 'key' AS kind, k.id::text AS id, k.name || ' (' || k.prefix || '…)' AS label FROM api_keys k WHERE k.workspace_id = $1
     UNION ALL
     SELECT 'team', t.id::text, t.name FROM teams t WHERE t.workspace_id = $1
     UNION ALL
     SELECT DISTINCT 'user', u.id::text, u.user_name FROM api_keys k JOIN users u ON u.id = k.owner_user_id WHERE k.workspace_id = $1`,
    [workspaceId],
  );
}

/** The workspace's teams the user belongs to: a member sees usage of these teams' keys only. */
export async function team_ids_for_member(q: Queryable, workspaceId: string, userId: string): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `SELECT t.id FROM teams t JOIN team_members m ON m.team_id = t.id WHERE t.workspace_id = $1 AND m.user_id = $2`,
    [workspaceId, userId],
  );
  return rows.map((r) => r.id);
}
