import { unauthenticated } from '../../../shared/errors.js';
import { generateSecret, isWellFormedSecret, sha256Hex } from '../../../shared/secrets.js';
import type { Queryable } from '../../db/database.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { Role } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { membership_list_for_user } from '../../stores/memberships.js';
import { session_authenticate, session_find_expired, session_insert, session_revoke, type AuthenticatedSession } from '../../stores/sessions.js';
import type { ConsoleAuth } from './console-auth.js';

/** Opens a console session; the returned token is the only copy of the secret. */
export async function openSession(deps: ControlPlaneDeps, q: Queryable, orgId: string, userId: string): Promise<{ token: string; expires_at: Date }> {
  const token = generateSecret('consoleSession');
  const now = deps.clock.now();
  const expires_at = new Date(now.getTime() + deps.config.sessionTtlSeconds * 1000);
  await session_insert(q, { token_hash: sha256Hex(token), org_id: orgId, user_id: userId, expires_at, now });
  return { token, expires_at };
}

/** How a refused token is explained: a deprovisioned member is told so, anything else gets one vague answer. */
interface Refusals {
  deprovisioned: string;
  invalid: string;
}

/** Resolves a presented console token; malformed ones are refused before any lookup. */
async function checkSession(deps: ControlPlaneDeps, token: string, refusals: Refusals): Promise<AuthenticatedSession> {
  const wellFormed = isWellFormedSecret(token, 'consoleSession');
  const session = wellFormed ? await session_authenticate(deps.db, sha256Hex(token), deps.clock.now()) : undefined;
  if (!session) {
    const expired = wellFormed ? await session_find_expired(deps.db, sha256Hex(token), deps.clock.now()) : undefined;
    if (expired) throw unauthenticated(expiredMessage(expired));
    throw unauthenticated(refusals.invalid);
  }
  if (session.membership_status !== 'active' || !session.user_active) throw unauthenticated(refusals.deprovisioned);
  return session;
}

/** An expired token's refusal names when it ran out and the command that issues a new one. */
function expiredMessage({ expires_at, org_slug }: { expires_at: Date; org_slug: string }): string {
  return (
    `This console token expired at ${expires_at.toISOString()}. ` +
    `Issue a new one with: npm run -s cli -- console-token --org ${org_slug} --owner <your email>`
  );
}

/** The console caller behind a bearer console token or session cookie. */
export async function authenticateConsole(deps: ControlPlaneDeps, token: string | undefined): Promise<ConsoleAuth> {
  if (!token) throw unauthenticated('A console token or session is required.');
  const s = await checkSession(deps, token, {
    deprovisioned: 'Your membership in this organization is inactive; the session has ended.',
    invalid: 'The console token or session is invalid or has expired.',
  });
  return { sessionId: s.session_id, userId: s.user_id, orgId: s.org_id, role: s.role, email: s.email };
}

/**
 * Trades a console token for a fresh browser session of its own (audited),
 * so signing out of the browser ends that session only and the token stays
 * usable.
 */
export async function signInWithConsoleToken(deps: ControlPlaneDeps, token: string): Promise<{ token: string; expires_at: Date }> {
  const { org_id, user_id } = await checkSession(deps, token, {
    deprovisioned: 'Your membership in this organization is inactive, so you cannot sign in.',
    invalid: 'That console token is not valid or has expired.',
  });
  return deps.db.transaction(async (tx) => {
    const opened = await openSession(deps, tx, org_id, user_id);
    await audit_insert(tx, {
      org_id,
      actor: `user:${user_id}`,
      action: 'session.open',
      target_type: 'user',
      target_id: user_id,
      detail: { method: 'console_token' },
      now: deps.clock.now(),
    });
    return opened;
  });
}

export interface Me {
  user_id: string;
  email: string | null;
  memberships: { org_id: string; role: Role }[];
}

/** `GET /v1/me`: the caller and every org they belong to. */
export async function describeMe(deps: ControlPlaneDeps, auth: ConsoleAuth): Promise<Me> {
  const memberships = await membership_list_for_user(deps.db, auth.userId);
  return { user_id: auth.userId, email: auth.email, memberships: memberships.map((m) => ({ org_id: m.org_id, role: m.role })) };
}

/** Ends the caller's own session (sign-out). */
export async function closeSession(deps: ControlPlaneDeps, auth: ConsoleAuth): Promise<void> {
  await session_revoke(deps.db, auth.sessionId, deps.clock.now());
}
