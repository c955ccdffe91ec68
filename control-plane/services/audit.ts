import type { ControlPlaneDeps } from '../deps.js';
import { assertAdmin, type ConsoleAuth } from '../http/auth.js';
import { audit_list, type AuditRow } from '../stores/audit.js';

/** The org's latest audit rows, newest first (admin). */
export async function listAudit(deps: ControlPlaneDeps, auth: ConsoleAuth, limit: number): Promise<AuditRow[]> {
  assertAdmin(auth);
  const rows = await audit_list(deps.db, auth.orgId, limit);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
