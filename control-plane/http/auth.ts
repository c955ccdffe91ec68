import type { Context, Next } from 'koa';
import { forbidden, unauthenticated } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import type { ConsoleAuth } from '../services/auth/console-auth.js';
import { authenticateConsole } from '../services/auth/sessions.js';

export const SESSION_COOKIE = 'tollgate_session';

/** The authenticated console caller that requireSession put on the context. */
export function authOf(ctx: Context): ConsoleAuth {
  const auth = (ctx.state as { auth?: ConsoleAuth }).auth;
  if (!auth) throw unauthenticated();
  return auth;
}

function presentedToken(ctx: Context): { token: string | undefined; cookie: boolean } {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match) return { token: match[1], cookie: false };
  return { token: ctx.cookies.get(SESSION_COOKIE) ?? undefined, cookie: true };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A write carried by the session cookie must come from the console itself.
 * SameSite=Lax stops other sites, not other origins of the same site (a page
 * on another port of this host): those can still post a form or a
 * no-preflight fetch with the cookie attached. So such a write needs
 * `Content-Type: application/json` — which another origin cannot send
 * without a CORS preflight this server never grants — even when it carries
 * no body, and an `Origin` naming this server (or, lacking one,
 * `Sec-Fetch-Site: same-origin`/`none`). Bearer callers (CLI, curl) send no
 * cookie and are not affected.
 */
function assertConsoleWrite(ctx: Context, publicBaseUrl: string): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const origin = ctx.get('origin');
  if (origin) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (origin !== new URL(publicBaseUrl).origin && host !== ctx.host) throw forbidden('Cross-origin requests may not use the console session.');
  } else {
    const site = ctx.get('sec-fetch-site');
    if (site && site !== 'same-origin' && site !== 'none') throw forbidden('Cross-origin requests may not use the console session.');
  }
  // Read from the header itself: ctx.is() answers false for a request without a body.
  const mediaType = ctx.get('content-type').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') throw forbidden('Console writes must be sent as Content-Type: application/json.');
}

/** Console auth: a bearer console token or the session cookie (whose writes must be the console's own). */
export function requireSession(deps: ControlPlaneDeps) {
  return async function authenticateSession(ctx: Context, next: Next): Promise<void> {
    const presented = presentedToken(ctx);
    const auth = await authenticateConsole(deps, presented.token);
    if (presented.cookie) assertConsoleWrite(ctx, deps.config.publicBaseUrl);
    (ctx.state as { auth?: ConsoleAuth }).auth = auth;
    await next();
  };
}

/**
 * Whether cookies get the Secure flag. An https public URL means TLS ends in
 * front of us (Koa runs with proxy: false), so the cookie library is told the
 * connection is secure rather than left to refuse a Secure cookie.
 */
export function useSecureCookies(publicBaseUrl: string, ctx: Context): boolean {
  const secure = publicBaseUrl.startsWith('https:');
  if (secure) ctx.cookies.secure = true;
  return secure;
}

/** Hands a new console session to the browser: httpOnly, SameSite=Lax, expiring with the session. */
export function setSessionCookie(ctx: Context, publicBaseUrl: string, session: { token: string; expires_at: Date }): void {
  ctx.cookies.set(SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: useSecureCookies(publicBaseUrl, ctx),
    path: '/',
    expires: session.expires_at,
    overwrite: true,
  });
  ctx.set('Cache-Control', 'no-store');
}
