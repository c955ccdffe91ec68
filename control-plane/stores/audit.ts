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

export async function audit_list(q: Queryable, orgId: string, limit = 100): Promise<AuditRow[]> {
  return q.query<AuditRow>(
    `SELECT id, actor, action, target_type, target_id, detail, created_at FROM audit_log
      WHERE org_id = $1 ORDER BY id DESC LIMIT $2`,
    [orgId, limit],
  );
}
