import type { Context, Next } from 'koa';
import { forbidden, notFound, unauthenticated } from '../../shared/errors.js';
import type { Role } from '../domain.js';
import type { ControlPlaneDeps } from '../deps.js';
import { checkSession } from '../services/sessions.js';

export const SESSION_COOKIE = 'tollgate_session';

/** The caller of a console route, once authenticated. */
export interface ConsoleAuth {
  sessionId: string;
  userId: string;
  orgId: string;
  role: Role;
  email: string | null;
}

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
    const token = presentedToken(ctx);
    if (!token) throw unauthenticated('A console token or session is required.');
    const result = await checkSession(deps, token);
    if (!result.ok) {
      throw unauthenticated(
        result.reason === 'deprovisioned'
          ? 'Your membership in this organization is inactive; the session has ended.'
          : 'The console token or session is invalid or has expired.',
      );
    }
    const s = result.session;
    const auth: ConsoleAuth = { sessionId: s.session_id, userId: s.user_id, orgId: s.org_id, role: s.role, email: s.email };
    (ctx.state as { auth?: ConsoleAuth }).auth = auth;
    await next();
  };
}

/** Another organization's ids answer 404, never 403: their existence is not disclosed. */
export function assertSameOrg(auth: ConsoleAuth, orgId: string | undefined, what: string): void {
  if (!orgId || orgId !== auth.orgId) throw notFound(what);
}

export function isAdmin(auth: ConsoleAuth): boolean {
  return auth.role === 'owner' || auth.role === 'admin';
}

export function assertAdmin(auth: ConsoleAuth): void {
  if (!isAdmin(auth)) throw forbidden('This action needs the owner or admin role.');
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
