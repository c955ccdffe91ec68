import type { Queryable } from '../db/database.js';
import type { Workspace } from '../domain.js';
import { CHANGE_CHANNEL } from './change-feed.js';
import { keyBudgetSelect, type KeyBudgetRow } from './key-budget.js';

const COLUMNS = 'id, org_id, slug, name, balance_usd::float8 AS balance_usd';

export async function workspace_insert(q: Queryable, w: { org_id: string; slug: string; name: string }): Promise<Workspace> {
  const [row] = await q.query<Workspace>(`INSERT INTO workspaces (org_id, slug, name) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`, [
    w.org_id,
    w.slug,
    w.name,
  ]);
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
  await q.query(`INSERT INTO ledger_entries (workspace_id, kind, amount_usd, actor_user_id, created_at) VALUES ($1, 'credit', $2, $3, $4)`, [
    w.workspace_id,
    w.amount_usd,
    w.actor_user_id,
    w.now,
  ]);
  const [row] = await q.query<{ balance_usd: number }>(
    `UPDATE workspaces SET balance_usd = balance_usd + $2 WHERE id = $1 RETURNING balance_usd::float8 AS balance_usd`,
    [w.workspace_id, w.amount_usd],
  );
  return row!.balance_usd;
}

export async function ledger_sum(q: Queryable, workspaceId: string): Promise<number> {
  const [row] = await q.query<{ total: number }>(`SELECT COALESCE(sum(amount_usd), 0)::float8 AS total FROM ledger_entries WHERE workspace_id = $1`, [
    workspaceId,
  ]);
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
  deployment: string | null;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  web_search_requests: number;
  /** Exact decimal text, may be negative. */
  cache_saved_usd: string;
  /** When the proxy received the call; undefined when it did not say. */
  started_at?: Date | null;
  /** When the proxy took the call's hold (epoch ms); null: now. The budget period the cost counts in. */
  held_at_ms?: number | null;
}

/**
 * The columns a usage report fills, in one place: each is passed as one
 * array parameter and unnested into rows, so a batch of any size is one
 * statement with one parameter per column. A new optional ledger field is one line
 * here (and its column in a migration).
 */
const USAGE_COLUMNS: readonly { column: string; type: string; value: (r: UsageRow) => unknown }[] = [
  { column: 'request_id', type: 'text', value: (r) => r.request_id },
  { column: 'key_id', type: 'uuid', value: (r) => r.key_id },
  { column: 'model', type: 'text', value: (r) => r.model },
  { column: 'input_tokens', type: 'int', value: (r) => r.input_tokens },
  { column: 'output_tokens', type: 'int', value: (r) => r.output_tokens },
  { column: 'format', type: 'text', value: (r) => r.format },
  { column: 'status', type: 'int', value: (r) => r.status },
  { column: 'latency_ms', type: 'int', value: (r) => r.latency_ms },
  { column: 'deployment', type: 'text', value: (r) => r.deployment },
  { column: 'cache_read_tokens', type: 'int', value: (r) => r.cache_read_tokens },
  { column: 'cache_write_tokens', type: 'int', value: (r) => r.cache_write_tokens },
  { column: 'cache_write_1h_tokens', type: 'int', value: (r) => r.cache_write_1h_tokens },
  { column: 'web_search_requests', type: 'int', value: (r) => r.web_search_requests },
  { column: 'cache_saved_usd', type: 'numeric', value: (r) => r.cache_saved_usd },
  { column: 'started_at', type: 'timestamptz', value: (r) => r.started_at ?? null },
];

const USAGE_INPUT = `SELECT * FROM unnest(${USAGE_COLUMNS.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')}, $${USAGE_COLUMNS.length + 1}::numeric[],
                            $${USAGE_COLUMNS.length + 4}::float8[])
         AS t(${USAGE_COLUMNS.map((c) => c.column).join(', ')}, cost_usd, held_at_ms)`;
const USAGE_NOW = `$${USAGE_COLUMNS.length + 2}`;
const USAGE_CHANNEL = `$${USAGE_COLUMNS.length + 3}`;

/**
 * The settlement statement's budget-period part (docs/keys.md): each new row's period (the one its
 * hold was taken in), and per key this batch's newest period with its cost in it. Which period the
 * key's count is of is decided in the UPDATE, on the row as it is once locked: a concurrent batch
 * may have moved it after this statement's snapshot was taken.
 */
const PERIOD_CTES = `periods AS (
       SELECT ins.key_id, ins.cost,
              date_trunc(pk.budget_period, COALESCE(to_timestamp(i.held_at_ms / 1000.0), ${USAGE_NOW}::timestamptz), 'UTC') AS start
         FROM ins JOIN input i ON i.request_id = ins.request_id JOIN api_keys pk ON pk.id = ins.key_id
     ), per_key AS (
       SELECT key_id, sum(cost) AS total, max(start) AS newest FROM periods GROUP BY key_id
     ), batch AS (
       SELECT p.key_id, p.total, p.newest,
              COALESCE((SELECT sum(x.cost) FROM periods x WHERE x.key_id = p.key_id AND x.start = p.newest), 0) AS in_newest
         FROM per_key p`;

/**
 * After a batch: each key's workspace balance and the key's remaining budget
 * (micro-dollars, floored) with the versions that order them, and whether
 * this batch emptied the balance or used up the budget.
 */
export interface SettledMoney extends KeyBudgetRow {
  key_id: string;
  workspace_id: string;
  balance_micros: number;
  balance_version: number;
  key_version: number;
  balance_emptied: boolean;
  budget_used_up: boolean;
}

/**
 * Settles a batch of usage in ONE statement: a ledger row per request id
 * never seen before (a repeat inserts nothing and moves no money), each
 * workspace balance and key spend moved once by the sum of what was new,
 * every key's money read back, and a change-feed row plus NOTIFY when the
 * batch emptied a balance or used up a budget. Before-values are the
 * returned after-values plus this batch's own total, which stays exact when
 * another batch commits first. Returns which request ids were newly
 * recorded and the money of every known key in the batch.
 *
 * Usually every report is new, so the statement names only the ids it
 * skipped (repeats, unknown keys), and only when it skipped any: sending back
 * every recorded id cost about 3 µs per row on the embedded store, an eighth
 * of the statement. With no key of the batch known it returns no row, having
 * recorded nothing.
 */
export async function ledger_settle_usage_batch(
  q: Queryable,
  rows: UsageRow[],
  now: Date,
): Promise<{ recorded: (requestId: string) => boolean; money: SettledMoney[] }> {
  if (!rows.length) return { recorded: () => false, money: [] };
  const result = await q.query<SettledMoney & { skipped: string[] | null }>(
    `WITH input AS (
       ${USAGE_INPUT}
     ), locked_workspaces AS MATERIALIZED (
       -- Row locks in one fixed order for every batch: workspaces by id, then keys by id, all
       -- before any row moves. Left to the plan, the UPDATEs below locked a workspace and its
       -- keys in an order that varied by batch, and concurrent batches of one workspace
       -- deadlocked (40P01). ORDER BY under FOR NO KEY UPDATE locks the rows in sorted order.
       SELECT w.id FROM workspaces w
        WHERE w.id IN (SELECT k.workspace_id FROM api_keys k WHERE k.id IN (SELECT key_id FROM input))
        ORDER BY w.id FOR NO KEY UPDATE
     ), locked_keys AS MATERIALIZED (
       SELECT k.id FROM api_keys k
        WHERE k.id IN (SELECT key_id FROM input) AND (SELECT count(*) FROM locked_workspaces) > 0
        ORDER BY k.id FOR NO KEY UPDATE
     ), ins AS (
       INSERT INTO ledger_entries (workspace_id, kind, amount_usd, ${USAGE_COLUMNS.map((c) => c.column).join(', ')}, created_at)
       SELECT k.workspace_id, 'usage', -i.cost_usd, ${USAGE_COLUMNS.map((c) => `i.${c.column}`).join(', ')}, ${USAGE_NOW}
         FROM input i JOIN api_keys k ON k.id = i.key_id
        -- Taken first: the one-time filter runs the locks before the first row is inserted.
        WHERE (SELECT count(*) FROM locked_keys) > 0
       ON CONFLICT (request_id) WHERE request_id IS NOT NULL DO NOTHING
       RETURNING workspace_id, key_id, -amount_usd AS cost, request_id
     ), ws AS (
       UPDATE workspaces w SET balance_usd = w.balance_usd - s.total
         FROM (SELECT workspace_id, sum(cost) AS total FROM ins GROUP BY workspace_id) s
        WHERE w.id = s.workspace_id
       RETURNING w.id, w.balance_usd, w.balance_version, s.total
     ), ${PERIOD_CTES}
     ), ks AS (
       UPDATE api_keys k SET spend_usd = k.spend_usd + s.total, last_used_at = ${USAGE_NOW},
              -- A newer period than the key's count starts it afresh; the same period adds; an older one is only lifetime spend.
              period_started_at = CASE WHEN s.newest > k.period_started_at OR k.period_started_at IS NULL THEN s.newest ELSE k.period_started_at END,
              period_spend_usd = CASE WHEN s.newest IS NULL THEN k.period_spend_usd
                                      WHEN s.newest > k.period_started_at OR k.period_started_at IS NULL THEN s.in_newest
                                      WHEN s.newest = k.period_started_at THEN k.period_spend_usd + s.in_newest
                                      ELSE k.period_spend_usd END
         FROM batch s
        WHERE k.id = s.key_id
       RETURNING k.id, k.spend_usd, k.period_spend_usd, k.period_started_at, k.version, s.total,
                 CASE WHEN k.period_started_at = s.newest THEN s.in_newest ELSE 0 END AS counted
     ), money AS (
       SELECT k.id AS key_id, k.workspace_id,
              COALESCE(ws.balance_usd, w.balance_usd) AS balance, COALESCE(ws.balance_version, w.balance_version) AS balance_version,
              ws.balance_usd IS NOT NULL AND ws.balance_usd + ws.total > 0 AND ws.balance_usd <= 0 AS balance_emptied,
              k.budget_usd, k.budget_period, k.budget_changed_at,
              COALESCE(ks.spend_usd, k.spend_usd) AS spend, COALESCE(ks.period_spend_usd, k.period_spend_usd) AS period_spend,
              COALESCE(ks.period_started_at, k.period_started_at) AS period_started_at,
              COALESCE(ks.version, k.version) AS key_version,
              -- The spend the budget counts (lifetime, or this period's) and this batch's part of it.
              CASE WHEN k.budget_period IS NULL THEN ks.spend_usd ELSE ks.period_spend_usd END AS counted_after,
              CASE WHEN k.budget_period IS NULL THEN ks.total ELSE ks.counted END AS counted_now
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
         LEFT JOIN ws ON ws.id = k.workspace_id
         LEFT JOIN ks ON ks.id = k.id
        WHERE k.id IN (SELECT key_id FROM input)
     ), flagged AS (
       SELECT m.*, m.counted_after IS NOT NULL AND m.budget_usd IS NOT NULL
                AND m.counted_after - m.counted_now < m.budget_usd AND m.counted_after >= m.budget_usd AS budget_used_up
         FROM money m
     ), feed AS (
       INSERT INTO change_feed (topic, subject_id)
       SELECT DISTINCT 'workspace', workspace_id::text FROM money WHERE balance_emptied
       UNION ALL
       SELECT 'key', key_id::text FROM flagged WHERE budget_used_up
       RETURNING id, topic, subject_id
     ), key_crossings AS (
       -- A key's counted spend (lifetime, or the period's) passing 50, 80 or 100 % of its budget in this batch: before < level <= after.
       SELECT m.key_id, m.workspace_id, l.level, m.budget_usd, m.counted_after AS spend_usd
         FROM money m CROSS JOIN (VALUES (50), (80), (100)) AS l(level)
        WHERE m.budget_usd > 0 AND m.counted_after - m.counted_now < m.budget_usd * l.level / 100 AND m.counted_after >= m.budget_usd * l.level / 100
     ), balance_crossings AS (
       -- The balance falling below the workspace's alert threshold in this batch: before >= threshold > after.
       SELECT ws.id AS workspace_id, w.slug, w.alert_balance_below_usd AS threshold, ws.balance_usd
         FROM ws JOIN workspaces w ON w.id = ws.id
        WHERE ws.balance_usd + ws.total >= w.alert_balance_below_usd AND ws.balance_usd < w.alert_balance_below_usd
     ), events AS (
       INSERT INTO alert_events (workspace_id, type, payload, created_at)
       SELECT c.workspace_id, 'key.budget_crossed',
              json_build_object('workspace_id', c.workspace_id, 'key_id', c.key_id, 'key_name', k.name, 'key_prefix', k.prefix,
                                'threshold_percent', c.level, 'budget_usd', c.budget_usd::float8, 'spend_usd', c.spend_usd::float8),
              ${USAGE_NOW}
         FROM key_crossings c JOIN api_keys k ON k.id = c.key_id
       UNION ALL
       SELECT b.workspace_id, 'workspace.balance_below',
              json_build_object('workspace_id', b.workspace_id, 'workspace_slug', b.slug, 'threshold_usd', b.threshold::float8, 'balance_usd', b.balance_usd::float8),
              ${USAGE_NOW}
         FROM balance_crossings b
       RETURNING id, workspace_id
     ), deliveries AS (
       INSERT INTO alert_deliveries (event_id, endpoint_id, next_attempt_at)
       SELECT e.id, a.id, ${USAGE_NOW} FROM events e JOIN alert_endpoints a ON a.workspace_id = e.workspace_id
     ), notified AS (
       SELECT count(pg_notify(${USAGE_CHANNEL}, json_build_object('id', id, 'topic', topic, 'subject_id', subject_id)::text)) AS n FROM feed
     )
     SELECT m.key_id, m.workspace_id,
            floor(m.balance * 1000000)::float8 AS balance_micros, m.balance_version::float8 AS balance_version,
            ${keyBudgetSelect('m', USAGE_NOW, { spend: 'm.spend', periodSpend: 'm.period_spend', periodStartedAt: 'm.period_started_at' })},
            m.key_version::float8 AS key_version, m.balance_emptied, m.budget_used_up,
            CASE WHEN (SELECT count(*) FROM ins) = (SELECT count(*) FROM input) THEN NULL
                 ELSE (SELECT array_agg(i.request_id) FROM input i WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.request_id = i.request_id))
            END AS skipped,
            (SELECT n FROM notified) AS notified
       FROM flagged m`,
    [...USAGE_COLUMNS.map((c) => rows.map(c.value)), rows.map((r) => r.cost_usd), now, CHANGE_CHANNEL, rows.map((r) => r.held_at_ms ?? null)],
    { name: 'ledger_settle_usage_batch' },
  );
  const first = result[0];
  const skipped = new Set(first?.skipped ?? []);
  return { recorded: (requestId) => first !== undefined && !skipped.has(requestId), money: result };
}

/** Balances (micro-dollars, floored) and versions of the workspaces of the given keys, and the keys' remaining budgets. */
export async function usage_money_for_keys(
  q: Queryable,
  keyIds: string[],
  now: Date,
): Promise<
  ({
    key_id: string;
    workspace_id: string;
    balance_micros: number;
    balance_version: number;
    key_version: number;
  } & KeyBudgetRow)[]
> {
  return q.query(
    `SELECT k.id AS key_id, k.workspace_id,
            floor(w.balance_usd * 1000000)::float8 AS balance_micros, w.balance_version::float8 AS balance_version,
            ${keyBudgetSelect('k', '$2')},
            k.version::float8 AS key_version
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.id = ANY($1::uuid[])`,
    [keyIds, now],
  );
}
