import Router from '@koa/router';
import type { Context } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { membership_list_for_user } from '../stores/memberships.js';
import { session_revoke } from '../stores/sessions.js';
import { SESSION_COOKIE } from '../http/auth.js';

/** `GET /v1/me` and `POST /v1/auth/logout`. */
export function meRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();

  router.get('/v1/me', requireSession(deps), async function showMe(ctx: Context) {
    const auth = authOf(ctx);
    const memberships = await membership_list_for_user(deps.db, auth.userId);
    ctx.body = {
      user_id: auth.userId,
      email: auth.email,
      memberships: memberships.map((m) => ({ org_id: m.org_id, role: m.role })),
    };
  });

  router.post('/v1/auth/logout', requireSession(deps), async function logout(ctx: Context) {
    await session_revoke(deps.db, authOf(ctx).sessionId, deps.clock.now());
    ctx.cookies.set(SESSION_COOKIE, null);
    ctx.status = 204;
  });

  return router;
}
