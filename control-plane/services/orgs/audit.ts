import type { ControlPlaneDeps } from '../../deps.js';
import { assertOrgAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { audit_list, type AuditFilter, type AuditRow } from '../../stores/audit.js';

/** The org's latest audit rows, newest first, narrowed by action, actor and time (admin). */
export async function listAudit(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  limit: number,
  filter: AuditFilter = {},
): Promise<AuditRow[]> {
  assertOrgAdmin(auth, rawOrgId);
  const rows = await audit_list(deps.db, auth.orgId, limit, filter);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
