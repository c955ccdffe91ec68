import Router from '@koa/router';
import type { Context } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession, SESSION_COOKIE } from '../http/auth.js';
import { closeAllSessions, closeSession, describeMe } from '../services/auth/sessions.js';

/** `GET /v1/me`, `POST /v1/auth/logout` and `POST /v1/auth/logout-all`. */
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

  // Sign out everywhere: every session and console token of the caller in this org, this one included.
  router.post('/v1/auth/logout-all', requireSession(deps), async function logoutEverywhere(ctx: Context) {
    const ended = await closeAllSessions(deps, authOf(ctx));
    ctx.cookies.set(SESSION_COOKIE, null);
    ctx.body = { sessions_ended: ended };
  });

  return router;
}
