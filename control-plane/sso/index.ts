import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { forbidden } from '../../shared/errors.js';
import { SESSION_COOKIE, setSessionCookie, useSecureCookies } from '../http/auth.js';
import { createAuthLimits } from '../http/auth-limits.js';
import type { ConsoleAuth } from '../services/auth/console-auth.js';
import { authenticateConsole } from '../services/auth/sessions.js';
import { createSecretSealer } from '../services/sso/secrets.js';
import { createSsoLogin, LOGIN_STATE_TTL_MS, SSO_CALLBACK_PATH } from '../services/sso/login.js';
import { ssoPages, writeConfirmPage } from './page.js';

/** Binds a pending login to the browser that started it (see migrations/003). */
export const SSO_LOGIN_COOKIE = 'tollgate_sso_login';
const LOGIN_COOKIE_PATH = '/v1/auth/sso/';
const LOGIN_PATH = '/v1/auth/sso/:org_slug/login';

const BROWSER_SECRET = /^[A-Za-z0-9_-]{43}$/;

/** The callback changes state (a pending login, a used one): a HEAD from a link scanner must not. */
async function getOnly(ctx: Context, next: Next): Promise<void> {
  if (ctx.method !== 'GET') {
    ctx.status = 405;
    ctx.set('Allow', 'GET');
    return;
  }
  await next();
}

/**
 * A login is started only by a POST from our own pages: a cross-site page
 * could otherwise run an attacker's org's sign-in in the victim's browser and
 * swap their console session (login CSRF). Browsers send Origin on every
 * POST; it must be this server, as the public URL names it or as the request
 * reached us.
 */
export function assertSameOrigin(ctx: Context, publicBaseUrl: string): void {
  const origin = ctx.get('origin');
  // Not ctx.origin: Koa's may echo the Origin header itself.
  const reached = `${ctx.protocol}://${ctx.get('host')}`;
  if (origin && (origin === new URL(publicBaseUrl).origin || origin === reached)) return;
  throw forbidden("This sign-in was not started from this site. Open your organization's sign-in link and press the button there.");
}

/** The console session this browser holds, if any and still valid. */
export async function signedInAs(deps: ControlPlaneDeps, ctx: Context): Promise<ConsoleAuth | undefined> {
  const token = ctx.cookies.get(SESSION_COOKIE);
  return token ? authenticateConsole(deps, token).catch(() => undefined) : undefined;
}

/** Where a finished login lands: the console, or the page that sent the browser to sign in (Claude Code's code page). */
const RETURN_COOKIE = 'tollgate_sso_return';
const RETURN_PATH = /^\/oauth\/device(\?user_code=[A-Z]{4}-[A-Z]{4})?$/;

function returnPathOf(ctx: Context): string {
  const wanted = ctx.cookies.get(RETURN_COOKIE);
  if (!wanted) return '/';
  ctx.cookies.set(RETURN_COOKIE, null, { path: LOGIN_COOKIE_PATH });
  return RETURN_PATH.test(wanted) ? wanted : '/';
}

/**
 * Starts an org's SSO login from a POST the caller has checked for origin:
 * binds it to this browser and redirects to the identity provider. `returnTo`
 * (one of RETURN_PATH's) is where the finished login lands instead of the console.
 */
export async function beginSsoLogin(
  ctx: Context,
  deps: ControlPlaneDeps,
  login: ReturnType<typeof createSsoLogin>,
  slug: string,
  returnTo: string | undefined,
): Promise<void> {
  const secure = useSecureCookies(deps.config.publicBaseUrl, ctx);
  const existing = ctx.cookies.get(SSO_LOGIN_COOKIE);
  const started = await login.start(slug, existing && BROWSER_SECRET.test(existing) ? existing : undefined);
  const cookie = { httpOnly: true, sameSite: 'lax' as const, secure, path: LOGIN_COOKIE_PATH, maxAge: LOGIN_STATE_TTL_MS, overwrite: true };
  ctx.cookies.set(SSO_LOGIN_COOKIE, started.browserSecret, cookie);
  // Only our own code page is a return path; anything else lands on the console.
  ctx.cookies.set(RETURN_COOKIE, returnTo && RETURN_PATH.test(returnTo) ? returnTo : null, cookie);
  ctx.set('Cache-Control', 'no-store');
  // 303: the browser follows a POST's redirect with a GET.
  ctx.status = 303;
  ctx.redirect(started.location);
}

/** SSO login (OIDC authorization code + PKCE) under /v1/auth/sso. */
export function ssoRouters(deps: ControlPlaneDeps): Router[] {
  const router = new Router();
  const login = createSsoLogin(deps, createSecretSealer(deps.config));
  const limits = createAuthLimits(deps);

  router.get(SSO_CALLBACK_PATH, getOnly, ssoPages(deps.logger), async function finishSsoLogin(ctx: Context) {
    // The login cookie stays: other tabs may have logins pending under it; it expires on its own.
    const browserSecret = ctx.cookies.get(SSO_LOGIN_COOKIE) ?? undefined;
    const current = await signedInAs(deps, ctx);
    const session = await login.finish(
      new URLSearchParams(ctx.querystring),
      browserSecret,
      current && { orgId: current.orgId, userId: current.userId },
    );
    setSessionCookie(ctx, deps.config.publicBaseUrl, session);
    ctx.redirect(returnPathOf(ctx));
  });

  /** The sign-in link shows a page with one button; nothing is started, fetched or written until it is pressed. */
  router.get(LOGIN_PATH, ssoPages(deps.logger), async function showSsoLogin(ctx: Context) {
    const slug = String(ctx.params.org_slug);
    const orgId = await login.orgIdOf(slug);
    const current = await signedInAs(deps, ctx);
    const paragraphs = ["You are about to sign in with your organization's identity provider."];
    if (current && current.orgId !== orgId) {
      paragraphs.push('This browser is signed in to another organization. Continuing signs you out of it and into this one.');
    }
    writeConfirmPage(ctx, { title: 'Single sign-on', paragraphs, action: ctx.path, button: 'Continue to sign in' });
  });

  router.post(LOGIN_PATH, limits.ssoStart, ssoPages(deps.logger), async function startSsoLogin(ctx: Context) {
    assertSameOrigin(ctx, deps.config.publicBaseUrl);
    await beginSsoLogin(ctx, deps, login, String(ctx.params.org_slug), undefined);
  });

  return [router];
}
