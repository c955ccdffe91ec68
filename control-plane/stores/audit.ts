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

/** Newest first, narrowed by the filter; with `beforeId` (the last row of the previous page), the older rows of the same org. */
export interface AuditFilter {
  /** An exact action (`key.revoke`) or a family ending in a dot (`key.`). */
  action?: string | undefined;
  actor?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** The last row of the previous page: only older rows of the same org. */
  beforeId?: string | undefined;
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
  if (filter.beforeId !== undefined) add((p) => `id < ${p}::bigint`, filter.beforeId);
  params.push(limit);
  return q.query<AuditRow>(
    `SELECT id, actor, action, target_type, target_id, detail, created_at FROM audit_log
      WHERE ${where} ORDER BY id DESC LIMIT $${params.length}`,
    params,
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
