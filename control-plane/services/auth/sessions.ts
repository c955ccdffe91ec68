import { forbidden, unauthenticated } from '../../../shared/errors.js';
import { generateSecret, isWellFormedSecret, sha256Hex } from '../../../shared/secrets.js';
import type { Queryable } from '../../db/database.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { Role } from '../../domain.js';
import { audit_exists_since, audit_insert } from '../../stores/audit.js';
import { membership_list_for_user } from '../../stores/memberships.js';
import {
  session_authenticate,
  session_find_expired,
  session_insert,
  session_revoke,
  session_revoke_all_for_user,
  type AuthenticatedSession,
  type SessionKind,
} from '../../stores/sessions.js';
import type { ConsoleAuth } from './console-auth.js';

/** Opens a console session; the returned token is the only copy of the secret. */
export async function openSession(
  deps: ControlPlaneDeps,
  q: Queryable,
  orgId: string,
  userId: string,
  lineage: { kind: SessionKind; parent?: { id: string; expires_at: Date } } = { kind: 'token' },
): Promise<{ token: string; expires_at: Date }> {
  const token = generateSecret('consoleSession');
  const now = deps.clock.now();
  const ttlEnd = now.getTime() + deps.config.sessionTtlSeconds * 1000;
  // A traded session never outlives what it was traded for, so trading cannot renew access forever.
  const expires_at = new Date(lineage.parent ? Math.min(ttlEnd, new Date(lineage.parent.expires_at).getTime()) : ttlEnd);
  await session_insert(q, {
    token_hash: sha256Hex(token),
    org_id: orgId,
    user_id: userId,
    expires_at,
    now,
    kind: lineage.kind,
    parent_id: lineage.parent?.id ?? null,
  });
  return { token, expires_at };
}

/** Repeated sign-ins by one person within this window leave one `session.open` audit row. */
const SESSION_OPEN_AUDIT_WINDOW_MS = 10 * 60_000;

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
  const parent = await checkSession(deps, token, {
    deprovisioned: 'Your membership in this organization is inactive, so you cannot sign in.',
    invalid: 'That console token is not valid or has expired.',
  });
  // A browser session traded for another would renew itself forever.
  if (parent.kind !== 'token') throw forbidden('Only a console token (from bootstrap or `tollgate console-token`) can be traded for a session.');
  const { org_id, user_id } = parent;
  return deps.db.transaction(async (tx) => {
    const opened = await openSession(deps, tx, org_id, user_id, {
      kind: 'browser',
      parent: { id: parent.session_id, expires_at: parent.expires_at },
    });
    // One session.open row per person per window: a member may sign in as often as they like, but must not be able to
    // push the rest of the audit log out of sight by doing so.
    const since = new Date(deps.clock.now().getTime() - SESSION_OPEN_AUDIT_WINDOW_MS);
    if (await audit_exists_since(tx, org_id, `user:${user_id}`, 'session.open', since)) return opened;
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

/**
 * "Sign out everywhere": ends every console session and console token the
 * caller holds in this organization, the calling one included (audited).
 */
export async function closeAllSessions(deps: ControlPlaneDeps, auth: ConsoleAuth): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const ended = await session_revoke_all_for_user(tx, auth.orgId, auth.userId, now);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: `user:${auth.userId}`,
      action: 'session.revoke_all',
      target_type: 'user',
      target_id: auth.userId,
      detail: { sessions: ended },
      now,
    });
    return ended;
  });
}
