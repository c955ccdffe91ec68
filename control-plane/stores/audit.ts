import type { Queryable } from '../db/database.js';
import type { Actor } from '../domain.js';

export interface AuditEntry {
  org_id: string;
  actor: Actor;
  action: string;
  target_type: string;
  target_id: string | null;
  /** Never a secret: ids, names and changed field names only. */
  detail?: Record<string, unknown>;
  now: Date;
}

export async function audit_insert(q: Queryable, e: AuditEntry): Promise<void> {
  await q.query(`INSERT INTO audit_log (org_id, actor, action, target_type, target_id, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    e.org_id,
    e.actor,
    e.action,
    e.target_type,
    e.target_id,
    JSON.stringify(e.detail ?? {}),
    e.now,
  ]);
}

export interface AuditRow {
  id: number;
  actor: string;
  action: string;
  target_type: string;
  target_id: string | null;
  detail: Record<string, unknown>;
  created_at: Date;
}

/** Newest first; with `beforeId` (the last row of the previous page), the older rows of the same org. */
export async function audit_list(q: Queryable, orgId: string, limit = 100, beforeId?: string): Promise<AuditRow[]> {
  return q.query<AuditRow>(
    `SELECT id, actor, action, target_type, target_id, detail, created_at FROM audit_log
      WHERE org_id = $1 AND ($3::bigint IS NULL OR id < $3::bigint) ORDER BY id DESC LIMIT $2`,
    [orgId, limit, beforeId ?? null],
  );
}

/** Whether `actor` wrote an `action` row in the org since `since`: lets frequent, repetitive events be recorded once per window. */
export async function audit_exists_since(q: Queryable, orgId: string, actor: string, action: string, since: Date): Promise<boolean> {
  const rows = await q.query(`SELECT 1 FROM audit_log WHERE org_id = $1 AND actor = $2 AND action = $3 AND created_at >= $4 LIMIT 1`, [
    orgId,
    actor,
    action,
    since,
  ]);
  return rows.length > 0;
}
