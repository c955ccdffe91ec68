import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { assertOrgAdmin } from '../services/auth/console-auth.js';
import { readValid } from '../http/body.js';
import { rotateScimToken, scimSettings, setScimEnabled } from '../services/scim/tokens.js';

export const SettingsBody = z.strictObject({ enabled: z.boolean() });

/** Settings → SCIM: GET/PUT /v1/orgs/:org_id/scim, POST /v1/orgs/:org_id/scim/token (owner or admin). */
export function scimSettingsRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();

  // The SCIM settings services take an org the caller is known to administer.
  function adminOfOrg(ctx: Context): { orgId: string; userId: string } {
    const auth = authOf(ctx);
    return { orgId: assertOrgAdmin(auth, ctx.params.org_id), userId: auth.userId };
  }

  router.get('/v1/orgs/:org_id/scim', requireSession(deps), async function showScimSettings(ctx: Context) {
    const { orgId } = adminOfOrg(ctx);
    ctx.body = await scimSettings(deps, orgId);
  });

  router.put('/v1/orgs/:org_id/scim', requireSession(deps), async function updateScimSettings(ctx: Context) {
    const { orgId, userId } = adminOfOrg(ctx);
    const body = await readValid(ctx, SettingsBody);
    ctx.body = await setScimEnabled(deps, orgId, userId, body.enabled);
  });

  router.post('/v1/orgs/:org_id/scim/token', requireSession(deps), async function generateScimToken(ctx: Context) {
    const { orgId, userId } = adminOfOrg(ctx);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await rotateScimToken(deps, orgId, userId);
  });

  return router;
}
