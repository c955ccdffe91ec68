import { generateSecret, isWellFormedSecret, sha256Hex } from '../../shared/secrets.js';
import type { Queryable } from '../db/database.js';
import type { ControlPlaneDeps } from '../deps.js';
import { session_authenticate, session_insert, session_revoke, type AuthenticatedSession } from '../stores/sessions.js';

/** Opens a console session; the returned token is the only copy of the secret. */
export async function openSession(
  deps: ControlPlaneDeps,
  q: Queryable,
  orgId: string,
  userId: string,
): Promise<{ token: string; expires_at: Date }> {
  const token = generateSecret('consoleSession');
  const now = deps.clock.now();
  const expires_at = new Date(now.getTime() + deps.config.sessionTtlSeconds * 1000);
  await session_insert(q, { token_hash: sha256Hex(token), org_id: orgId, user_id: userId, expires_at, now });
  return { token, expires_at };
}

export type SessionCheck =
  | { ok: true; session: AuthenticatedSession }
  | { ok: false; reason: 'malformed' | 'unknown' | 'deprovisioned' };

/** Resolves a presented console token; malformed ones are refused before any lookup. */
export async function checkSession(deps: ControlPlaneDeps, token: string): Promise<SessionCheck> {
  if (!isWellFormedSecret(token, 'consoleSession')) return { ok: false, reason: 'malformed' };
  const session = await session_authenticate(deps.db, sha256Hex(token), deps.clock.now());
  if (!session) return { ok: false, reason: 'unknown' };
  if (session.membership_status !== 'active' || !session.user_active) return { ok: false, reason: 'deprovisioned' };
  return { ok: true, session };
}

export async function closeSession(deps: ControlPlaneDeps, sessionId: string): Promise<void> {
  await session_revoke(deps.db, sessionId, deps.clock.now());
}
