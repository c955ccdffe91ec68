import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { parseValid, readValid } from '../http/body.js';
import { changeMemberRole, listMembers, revokePersonalKeys } from '../services/orgs/members.js';
import { listAudit } from '../services/orgs/audit.js';
import { assertOrgAdmin, assertOwnOrg } from '../services/auth/console-auth.js';

export const roleChange = z.object({ role: z.enum(['owner', 'admin', 'member']) }).strict();
export const auditQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(100),
    cursor: z.string().max(64).optional(),
    /** `key.revoke`, or a family: `key.` */
    action: z
      .string()
      .regex(/^[a-z_]+(\.[a-z_]+)*\.?$/, 'an action like key.revoke, or a family like key.')
      .optional(),
    /** `user:<id>`, `scim` or `system`, as the rows show it. */
    actor: z.string().min(1).max(200).optional(),
    since: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
    until: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
  })
  .strict();

/** Settings → Members and the org's audit trail: /v1/orgs/:org_id/members, /v1/orgs/:org_id/audit */
/*
 * Where a route reads input, it asks the service's access check first, so a
 * caller who may not act learns nothing from validation errors; the service
 * checks again, so it is safe from any caller.
 */
export function membersRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.get('/v1/orgs/:org_id/members', session, async function listOrgMembers(ctx: Context) {
    ctx.body = await listMembers(deps, authOf(ctx), ctx.params.org_id);
  });

  router.patch('/v1/orgs/:org_id/members/:user_id', session, async function changeRole(ctx: Context) {
    const auth = authOf(ctx);
    assertOwnOrg(auth, ctx.params.org_id);
    const { role } = await readValid(ctx, roleChange);
    ctx.body = await changeMemberRole(deps, auth, ctx.params.org_id, ctx.params.user_id, role);
  });

  router.post('/v1/orgs/:org_id/members/:user_id/revoke-personal-keys', session, async function revokeMembersPersonalKeys(ctx: Context) {
    ctx.body = await revokePersonalKeys(deps, authOf(ctx), ctx.params.org_id, ctx.params.user_id);
  });

  router.get('/v1/orgs/:org_id/audit', session, async function showAuditTrail(ctx: Context) {
    const auth = authOf(ctx);
    assertOrgAdmin(auth, ctx.params.org_id);
    const { limit, cursor, ...filter } = parseValid(auditQuery, ctx.query);
    const page = await listAudit(deps, auth, ctx.params.org_id, { limit, cursor }, filter);
    // The body stays the array it always was; the next page is named in headers (RFC 8288 Link, and plainly).
    if (page.next_cursor) {
      const next = new URLSearchParams(ctx.querystring);
      next.set('limit', String(limit));
      next.set('cursor', page.next_cursor);
      ctx.set('X-Next-Cursor', page.next_cursor);
      ctx.set('Link', `</v1/orgs/${encodeURIComponent(auth.orgId)}/audit?${next.toString()}>; rel="next"`);
    }
    ctx.body = page.entries;
  });

  return router;
}
