import type { ControlPlaneDeps } from '../../deps.js';
import { assertOrgAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { audit_list, type AuditRow } from '../../stores/audit.js';

/** The org's latest audit rows, newest first (admin). */
export async function listAudit(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId: string | undefined, limit: number): Promise<AuditRow[]> {
  assertOrgAdmin(auth, rawOrgId);
  const rows = await audit_list(deps.db, auth.orgId, limit);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
