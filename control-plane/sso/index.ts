import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { setSessionCookie, useSecureCookies } from '../http/auth.js';
import { createAuthLimits } from '../http/auth-limits.js';
import { createSecretSealer } from '../services/sso/secrets.js';
import { createSsoLogin, LOGIN_STATE_TTL_MS, SSO_CALLBACK_PATH } from '../services/sso/login.js';
import { ssoPages } from './page.js';

/** Binds a pending login to the browser that started it (see migrations/003). */
export const SSO_LOGIN_COOKIE = 'tollgate_sso_login';
const LOGIN_COOKIE_PATH = '/v1/auth/sso/';

const BROWSER_SECRET = /^[A-Za-z0-9_-]{43}$/;

/** Both routes change state (a pending login, a used one): a HEAD from a link scanner must not. */
async function getOnly(ctx: Context, next: Next): Promise<void> {
  if (ctx.method !== 'GET') {
    ctx.status = 405;
    ctx.set('Allow', 'GET');
    return;
  }
  await next();
}

/** Cookies are Secure when the public URL is https, even when TLS ends at a proxy in front of us. */
/** SSO login (OIDC authorization code + PKCE) under /v1/auth/sso. */
export function ssoRouters(deps: ControlPlaneDeps): Router[] {
  const router = new Router();
  const login = createSsoLogin(deps, createSecretSealer(deps.config));
  const limits = createAuthLimits(deps);

  router.get(SSO_CALLBACK_PATH, getOnly, ssoPages(deps.logger), async function finishSsoLogin(ctx: Context) {
    // The login cookie stays: other tabs may have logins pending under it; it expires on its own.
    const browserSecret = ctx.cookies.get(SSO_LOGIN_COOKIE) ?? undefined;
    const session = await login.finish(new URLSearchParams(ctx.querystring), browserSecret);
    setSessionCookie(ctx, deps.config.publicBaseUrl, session);
    ctx.redirect('/');
  });

  router.get('/v1/auth/sso/:org_slug/login', getOnly, limits.ssoStart, ssoPages(deps.logger), async function startSsoLogin(ctx: Context) {
    const secure = useSecureCookies(deps.config.publicBaseUrl, ctx);
    const existing = ctx.cookies.get(SSO_LOGIN_COOKIE);
    const started = await login.start(String(ctx.params.org_slug), existing && BROWSER_SECRET.test(existing) ? existing : undefined);
    ctx.cookies.set(SSO_LOGIN_COOKIE, started.browserSecret, {
      httpOnly: true,
      sameSite: 'lax',
      secure,
      path: LOGIN_COOKIE_PATH,
      maxAge: LOGIN_STATE_TTL_MS,
      overwrite: true,
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(started.location);
  });

  return [router];
}
