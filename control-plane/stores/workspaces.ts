import type { Queryable } from '../db/database.js';
import type { Workspace } from '../domain.js';

const COLUMNS = 'id, org_id, slug, name, balance_usd::float8 AS balance_usd';

export async function workspace_insert(q: Queryable, w: { org_id: string; slug: string; name: string }): Promise<Workspace> {
  const [row] = await q.query<Workspace>(
    `INSERT INTO workspaces (org_id, slug, name) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [w.org_id, w.slug, w.name],
  );
  return row!;
}

export async function workspace_find_by_id(q: Queryable, id: string): Promise<Workspace | undefined> {
  const [row] = await q.query<Workspace>(`SELECT ${COLUMNS} FROM workspaces WHERE id = $1`, [id]);
  return row;
}

export async function workspace_find_by_slug(q: Queryable, slug: string): Promise<Workspace | undefined> {
  const [row] = await q.query<Workspace>(`SELECT ${COLUMNS} FROM workspaces WHERE slug = $1`, [slug]);
  return row;
}

export async function workspace_list_for_org(q: Queryable, orgId: string): Promise<Workspace[]> {
  return q.query<Workspace>(`SELECT ${COLUMNS} FROM workspaces WHERE org_id = $1 ORDER BY slug`, [orgId]);
}

/** Adds a credit ledger row and moves the cached balance in one statement pair (caller's transaction). */
export async function workspace_credit(
  q: Queryable,
  w: { workspace_id: string; amount_usd: number; actor_user_id: string | null; now: Date },
): Promise<number> {
  await q.query(
    `INSERT INTO ledger_entries (workspace_id, kind, amount_usd, actor_user_id, created_at) VALUES ($1, 'credit', $2, $3, $4)`,
    [w.workspace_id, w.amount_usd, w.actor_user_id, w.now],
  );
  const [row] = await q.query<{ balance_usd: number }>(
    `UPDATE workspaces SET balance_usd = balance_usd + $2 WHERE id = $1 RETURNING balance_usd::float8 AS balance_usd`,
    [w.workspace_id, w.amount_usd],
  );
  return row!.balance_usd;
}

export async function ledger_sum(q: Queryable, workspaceId: string): Promise<number> {
  const [row] = await q.query<{ total: number }>(
    `SELECT COALESCE(sum(amount_usd), 0)::float8 AS total FROM ledger_entries WHERE workspace_id = $1`,
    [workspaceId],
  );
  return row!.total;
}


export interface UsageRow {
  request_id: string;
  key_id: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** Exact decimal text, e.g. "0.000198": no float reaches the ledger. */
  cost_usd: string;
  format: string | null;
  status: number | null;
  latency_ms: number | null;
}

/**
 * Records many requests' usage in one statement, each exactly once: a
 * request id already in the ledger inserts nothing and moves no money, and
 * balances and key spend move by the sum of what was inserted. Returns the
 * request ids that were new.
 */
export async function ledger_record_usage_batch(q: Queryable, rows: UsageRow[], now: Date): Promise<Set<string>> {
  if (!rows.length) return new Set();
  const inserted = await q.query<{ request_id: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::int[], $5::int[], $6::numeric[], $8::text[], $9::int[], $10::int[])
         AS t(request_id, key_id, model, input_tokens, output_tokens, cost_usd, format, status, latency_ms)
     ), ins AS (
       INSERT INTO ledger_entries (workspace_id, kind, amount_usd, key_id, request_id, model, input_tokens, output_tokens, created_at, format, status, latency_ms)
       SELECT k.workspace_id, 'usage', -i.cost_usd, i.key_id, i.request_id, i.model, i.input_tokens, i.output_tokens, $7, i.format, i.status, i.latency_ms
         FROM input i JOIN api_keys k ON k.id = i.key_id
       ON CONFLICT (request_id) WHERE request_id IS NOT NULL DO NOTHING
       RETURNING workspace_id, key_id, -amount_usd AS cost, request_id
     ), ws AS (
       UPDATE workspaces w SET balance_usd = w.balance_usd - s.total
         FROM (SELECT workspace_id, sum(cost) AS total FROM ins GROUP BY workspace_id) s
        WHERE w.id = s.workspace_id RETURNING w.id
     ), ks AS (
       UPDATE api_keys k SET spend_usd = k.spend_usd + s.total, last_used_at = $7
         FROM (SELECT key_id, sum(cost) AS total FROM ins GROUP BY key_id) s
        WHERE k.id = s.key_id RETURNING k.id
     )
     SELECT request_id FROM ins`,
    [
      rows.map((r) => r.request_id),
      rows.map((r) => r.key_id),
      rows.map((r) => r.model),
      rows.map((r) => r.input_tokens),
      rows.map((r) => r.output_tokens),
      rows.map((r) => r.cost_usd),
      now,
      rows.map((r) => r.format),
      rows.map((r) => r.status),
      rows.map((r) => r.latency_ms),
    ],
  );
  return new Set(inserted.map((r) => r.request_id));
}

/** Balances (micro-dollars, floored) and versions of the workspaces of the given keys, and the keys' remaining budgets. */
export async function usage_money_for_keys(
  q: Queryable,
  keyIds: string[],
): Promise<
  {
    key_id: string;
    workspace_id: string;
    balance_micros: number;
    balance_version: number;
    key_remaining_micros: number | null;
    key_version: number;
    budget_exhausted: boolean;
  }[]
> {
  return q.query(
    `SELECT k.id AS key_id, k.workspace_id,
            floor(w.balance_usd * 1000000)::float8 AS balance_micros, w.balance_version::float8 AS balance_version,
            CASE WHEN k.budget_usd IS NULL THEN NULL ELSE floor((k.budget_usd - k.spend_usd) * 1000000)::float8 END AS key_remaining_micros,
            k.version::float8 AS key_version,
            (k.budget_usd IS NOT NULL AND k.spend_usd >= k.budget_usd) AS budget_exhausted
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.id = ANY($1::uuid[])`,
    [keyIds],
  );
}
