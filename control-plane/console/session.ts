import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { invalidInput } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { setSessionCookie } from '../http/auth.js';
import { createAuthLimits } from '../http/auth-limits.js';
import { readBody, parseValid } from '../http/body.js';
import { signInWithConsoleToken } from '../services/auth/sessions.js';

export const SignIn = z.strictObject({ token: z.string().min(1).max(200) });

/**
 * `POST /v1/auth/session {token}` → 204 + the console's httpOnly session
 * cookie. The page never keeps the console token: it is traded for a fresh
 * session of its own, so signing out of the browser ends that session only
 * and the bootstrap token stays usable (an owner without SSO would otherwise
 * lock themselves out by signing out).
 */
export function sessionRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const limits = createAuthLimits(deps);

  router.post('/v1/auth/session', limits.sessionExchange, async function signInWithToken(ctx: Context) {
    // Only JSON: a cross-site HTML form cannot send it without a CORS
    // preflight, so no other site can sign a browser into its own account.
    if (!ctx.is('application/json')) throw invalidInput('Content-Type must be application/json.');
    const text = await readBody(ctx);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw invalidInput('Request body is not valid JSON.');
    }
    const { token } = parseValid(SignIn, raw);
    const session = await signInWithConsoleToken(deps, token.trim());
    setSessionCookie(ctx, deps.config.publicBaseUrl, session);
    ctx.status = 204;
  });

  return router;
}
