import type { Queryable } from '../db/database.js';

export interface AlertEndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  secret_sealed: string;
  created_at: Date;
}

export async function alert_endpoint_insert(
  q: Queryable,
  e: { id: string; workspace_id: string; url: string; secret_sealed: string; now: Date },
): Promise<AlertEndpointRow> {
  const [row] = await q.query<AlertEndpointRow>(
    `INSERT INTO alert_endpoints (id, workspace_id, url, secret_sealed, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [e.id, e.workspace_id, e.url, e.secret_sealed, e.now],
  );
  return row!;
}

export async function alert_endpoint_list(q: Queryable, workspaceId: string): Promise<AlertEndpointRow[]> {
  return q.query<AlertEndpointRow>(`SELECT * FROM alert_endpoints WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId]);
}

/** Deletes the endpoint (and its pending deliveries); false when the workspace has no such endpoint. */
export async function alert_endpoint_delete(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const rows = await q.query(`DELETE FROM alert_endpoints WHERE workspace_id = $1 AND id = $2 RETURNING id`, [workspaceId, id]);
  return rows.length > 0;
}

export async function workspace_alert_threshold_get(q: Queryable, workspaceId: string): Promise<number | null> {
  const [row] = await q.query<{ t: number | null }>(`SELECT alert_balance_below_usd::float8 AS t FROM workspaces WHERE id = $1`, [workspaceId]);
  return row?.t ?? null;
}

export async function workspace_alert_threshold_set(q: Queryable, workspaceId: string, thresholdUsd: number | null): Promise<void> {
  await q.query(`UPDATE workspaces SET alert_balance_below_usd = $2 WHERE id = $1`, [workspaceId, thresholdUsd]);
}

export interface AlertEventRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
  deliveries: {
    endpoint_id: string;
    url: string;
    attempts: number;
    next_attempt_at: string;
    delivered_at: string | null;
    last_status: number | null;
    last_error: string | null;
  }[];
}

/** The workspace's latest alert events, newest first, each with its deliveries. */
export async function alert_event_list(q: Queryable, workspaceId: string, limit: number): Promise<AlertEventRow[]> {
  return q.query<AlertEventRow>(
    `SELECT e.id, e.type, e.payload, e.created_at,
            COALESCE((SELECT json_agg(json_build_object('endpoint_id', d.endpoint_id, 'url', a.url, 'attempts', d.attempts,
                                                        'next_attempt_at', d.next_attempt_at, 'delivered_at', d.delivered_at,
                                                        'last_status', d.last_status, 'last_error', d.last_error) ORDER BY a.created_at)
                        FROM alert_deliveries d JOIN alert_endpoints a ON a.id = d.endpoint_id WHERE d.event_id = e.id), '[]'::json) AS deliveries
       FROM alert_events e
      WHERE e.workspace_id = $1
      ORDER BY e.created_at DESC, e.type, (e.payload->>'threshold_percent')::int DESC, e.id
      LIMIT $2`,
    [workspaceId, limit],
  );
}

export interface DueDeliveryRow {
  event_id: string;
  endpoint_id: string;
  workspace_id: string;
  attempts: number;
  url: string;
  secret_sealed: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

/**
 * Claims up to `limit` deliveries that are due: their next attempt moves to
 * `lease_until`, so another control plane (or this one's next pass) leaves
 * them alone while this attempt runs; a crash mid-attempt only delays the
 * retry to the lease's end.
 */
export async function alert_delivery_claim_due(q: Queryable, now: Date, leaseUntil: Date, limit: number): Promise<DueDeliveryRow[]> {
  return q.query<DueDeliveryRow>(
    `WITH due AS (
       SELECT event_id, endpoint_id FROM alert_deliveries
        WHERE delivered_at IS NULL AND next_attempt_at <= $1
        ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED
     ), claimed AS (
       UPDATE alert_deliveries d SET next_attempt_at = $2 FROM due
        WHERE d.event_id = due.event_id AND d.endpoint_id = due.endpoint_id
       RETURNING d.event_id, d.endpoint_id, d.attempts
     )
     SELECT c.event_id, c.endpoint_id, c.attempts, a.workspace_id, a.url, a.secret_sealed, e.type, e.payload, e.created_at
       FROM claimed c JOIN alert_endpoints a ON a.id = c.endpoint_id JOIN alert_events e ON e.id = c.event_id
      ORDER BY e.created_at, e.id`,
    [now, leaseUntil, limit],
  );
}

/** Records one attempt: delivered (2xx), or the next attempt's time and why this one failed. */
export async function alert_delivery_record_attempt(
  q: Queryable,
  d: { event_id: string; endpoint_id: string; status: number | null; error: string | null; delivered_at: Date | null; next_attempt_at: Date },
): Promise<void> {
  await q.query(
    `UPDATE alert_deliveries SET attempts = attempts + 1, last_status = $3, last_error = $4, delivered_at = $5, next_attempt_at = $6
      WHERE event_id = $1 AND endpoint_id = $2`,
    [d.event_id, d.endpoint_id, d.status, d.error, d.delivered_at, d.next_attempt_at],
  );
}
