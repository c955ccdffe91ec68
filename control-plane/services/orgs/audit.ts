import { invalidInput } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { assertOrgAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { audit_list, type AuditFilter, type AuditRow } from '../../stores/audit.js';

/** The page cursor names the last row of a page; opaque to clients, and only ever compared within the caller's org. */
function encodeCursor(id: number): string {
  return Buffer.from(`a${id}`).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const match = /^a(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw invalidInput('cursor: not a cursor this API gave out');
  return match[1]!;
}

/** The org's audit rows, newest first, narrowed by action, actor and time, a page at a time (admin); `next_cursor` is null on the last page. */
export async function listAudit(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  page: { limit: number; cursor?: string | undefined },
  filter: AuditFilter = {},
): Promise<{ entries: AuditRow[]; next_cursor: string | null }> {
  assertOrgAdmin(auth, rawOrgId);
  const before = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const rows = (await audit_list(deps.db, auth.orgId, page.limit + 1, { ...filter, beforeId: before })).map((r) => ({ ...r, id: Number(r.id) }));
  const entries = rows.slice(0, page.limit);
  return { entries, next_cursor: rows.length > page.limit ? encodeCursor(entries.at(-1)!.id) : null };
}
