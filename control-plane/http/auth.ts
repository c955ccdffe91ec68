import type { Context, Next } from 'koa';
import { unauthenticated } from '../../shared/errors.js';
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

function presentedToken(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match) return match[1];
  return ctx.cookies.get(SESSION_COOKIE) ?? undefined;
}

/** Console auth: a bearer console token or the session cookie. */
export function requireSession(deps: ControlPlaneDeps) {
  return async function authenticateSession(ctx: Context, next: Next): Promise<void> {
    (ctx.state as { auth?: ConsoleAuth }).auth = await authenticateConsole(deps, presentedToken(ctx));
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
