import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { readValid } from '../http/body.js';
import { assertOrgAdmin } from '../services/auth/console-auth.js';
import { listDevices, revokeDevices } from '../services/gateway-signin/sessions.js';
import { saveSigninSettings, showSigninSettings } from '../services/gateway-signin/settings.js';

export const signinSettingsBody = z
  .object({
    team_id: z.string().min(1).max(64),
    budget_usd: z.number().positive().max(1e9).nullable().default(null),
  })
  .strict();

/** Claude Code sign-in: the org's default team and budget, and each member's signed-in devices. */
export function gatewaySigninRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.get('/v1/orgs/:org_id/claude-code-signin', session, async function showSignin(ctx: Context) {
    ctx.body = await showSigninSettings(deps, authOf(ctx), ctx.params.org_id);
  });
  router.put('/v1/orgs/:org_id/claude-code-signin', session, async function saveSignin(ctx: Context) {
    const auth = authOf(ctx);
    assertOrgAdmin(auth, ctx.params.org_id);
    ctx.body = await saveSigninSettings(deps, auth, ctx.params.org_id, await readValid(ctx, signinSettingsBody));
  });
  router.get('/v1/orgs/:org_id/members/:user_id/devices', session, async function showDevices(ctx: Context) {
    ctx.body = await listDevices(deps, authOf(ctx), ctx.params.org_id, ctx.params.user_id);
  });
  router.post('/v1/orgs/:org_id/members/:user_id/devices/revoke', session, async function revokeAllDevices(ctx: Context) {
    ctx.body = await revokeDevices(deps, authOf(ctx), ctx.params.org_id, ctx.params.user_id);
  });
  router.post('/v1/orgs/:org_id/members/:user_id/devices/:device_id/revoke', session, async function revokeOneDevice(ctx: Context) {
    ctx.body = await revokeDevices(deps, authOf(ctx), ctx.params.org_id, ctx.params.user_id, ctx.params.device_id);
  });
  return router;
}
