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

export interface AuditFilter {
  /** An exact action (`key.revoke`) or a family ending in a dot (`key.`). */
  action?: string | undefined;
  actor?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export async function audit_list(q: Queryable, orgId: string, limit = 100, filter: AuditFilter = {}): Promise<AuditRow[]> {
  const params: unknown[] = [orgId];
  let where = 'org_id = $1';
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where += ` AND ${sql(`$${params.length}`)}`;
  };
  if (filter.action?.endsWith('.')) add((p) => `starts_with(action, ${p})`, filter.action);
  else if (filter.action) add((p) => `action = ${p}`, filter.action);
  if (filter.actor) add((p) => `actor = ${p}`, filter.actor);
  if (filter.since) add((p) => `created_at >= ${p}`, filter.since);
  if (filter.until) add((p) => `created_at < ${p}`, filter.until);
  params.push(limit);
  return q.query<AuditRow>(
    `SELECT id, actor, action, target_type, target_id, detail, created_at FROM audit_log
      WHERE ${where} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
}
