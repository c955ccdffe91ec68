import type { Queryable } from '../db/database.js';
import { countedSpendSql, periodStartSql } from './key-budget.js';

/** A group of refused calls as the proxy reported it (docs/console-api.md, refusals). */
export interface RefusalRow {
  request_id: string;
  key_id: string;
  /** The model the calls asked for; null when they were refused before their body was read. */
  model: string | null;
  format: string | null;
  status: number | null;
  refusal_reason: string;
  refused_count: number;
  started_at: Date | null;
}

/**
 * Records reported refusals, each group once (idempotent on its first
 * request id, like settled calls): a usage row at no cost, in the key's
 * workspace; a key this control plane does not know records nothing. A
 * budget refusal also records the key's 100 % budget alert, with one
 * delivery per webhook, when no 100 % alert was recorded for the key in its
 * present period (a key with a `budget_period`: since the period `now` is in
 * began, so a monthly key refused again next month tells its owner again) or,
 * for a lifetime budget, at its present budget amount: a key refused on its
 * worst case before its spend reached the budget (a call that does not fit
 * what is left) still tells its owner that it stopped. Moves no money. Returns the request ids recorded now.
 */
export async function ledger_record_refusals(q: Queryable, rows: RefusalRow[], now: Date): Promise<Set<string>> {
  if (!rows.length) return new Set();
  const recorded = await q.query<{ request_id: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::text[], $7::int[], $9::timestamptz[])
         AS t(request_id, key_id, model, format, status, refusal_reason, refused_count, started_at)
     ), ins AS (
       INSERT INTO ledger_entries (workspace_id, kind, amount_usd, input_tokens, output_tokens, request_id, key_id, model, format, status, refusal_reason, refused_count, started_at, created_at)
       SELECT k.workspace_id, 'usage', 0, 0, 0, i.request_id, i.key_id, i.model, i.format, i.status, i.refusal_reason, i.refused_count, i.started_at, $8
         FROM input i JOIN api_keys k ON k.id = i.key_id
       ON CONFLICT (request_id) WHERE request_id IS NOT NULL DO NOTHING
       RETURNING request_id, key_id, workspace_id, refusal_reason
     ), budget_stops AS (
       -- The spend the budget counts, as the settlement's alerts report it: lifetime, or the present period's.
       SELECT DISTINCT k.id AS key_id, k.workspace_id, k.name, k.prefix, k.budget_usd, ${countedSpendSql('k', '$8')} AS spend_usd
         FROM ins JOIN api_keys k ON k.id = ins.key_id
        WHERE ins.refusal_reason = 'budget' AND k.budget_usd > 0
          AND NOT EXISTS (
            SELECT 1 FROM alert_events e
             WHERE e.workspace_id = k.workspace_id AND e.type = 'key.budget_crossed'
               AND e.payload->>'key_id' = k.id::text AND (e.payload->>'threshold_percent')::int = 100
               AND CASE WHEN k.budget_period IS NULL THEN (e.payload->>'budget_usd')::float8 = k.budget_usd::float8
                        ELSE e.created_at >= ${periodStartSql('k', '$8')} END)
     ), events AS (
       INSERT INTO alert_events (workspace_id, type, payload, created_at)
       SELECT b.workspace_id, 'key.budget_crossed',
              json_build_object('workspace_id', b.workspace_id, 'key_id', b.key_id, 'key_name', b.name, 'key_prefix', b.prefix,
                                'threshold_percent', 100, 'budget_usd', b.budget_usd::float8, 'spend_usd', b.spend_usd::float8),
              $8
         FROM budget_stops b
       RETURNING id, workspace_id
     ), deliveries AS (
       INSERT INTO alert_deliveries (event_id, endpoint_id, next_attempt_at)
       SELECT e.id, a.id, $8 FROM events e JOIN alert_endpoints a ON a.workspace_id = e.workspace_id
     )
     SELECT request_id FROM ins`,
    [
      rows.map((r) => r.request_id),
      rows.map((r) => r.key_id),
      rows.map((r) => r.model),
      rows.map((r) => r.format),
      rows.map((r) => r.status),
      rows.map((r) => r.refusal_reason),
      rows.map((r) => r.refused_count),
      now,
      rows.map((r) => r.started_at),
    ],
  );
  return new Set(recorded.map((r) => r.request_id));
}
