import Router from '@koa/router';
import type { Context } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession, SESSION_COOKIE } from '../http/auth.js';
import { closeSession, describeMe } from '../services/auth/sessions.js';

/** `GET /v1/me` and `POST /v1/auth/logout`. */
export function meRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();

  router.get('/v1/me', requireSession(deps), async function showMe(ctx: Context) {
    ctx.body = await describeMe(deps, authOf(ctx));
  });

  router.post('/v1/auth/logout', requireSession(deps), async function logout(ctx: Context) {
    await closeSession(deps, authOf(ctx));
    ctx.cookies.set(SESSION_COOKIE, null);
    ctx.status = 204;
  });

  return router;
}
