import type { Queryable } from '../db/database.js';
import type { ConsoleSession, MembershipStatus, Role } from '../domain.js';

export async function session_insert(
  q: Queryable,
  s: { token_hash: string; org_id: string; user_id: string; expires_at: Date; now: Date; kind: SessionKind; parent_id: string | null },
): Promise<ConsoleSession> {
  const [row] = await q.query<ConsoleSession>(
    `INSERT INTO console_sessions (token_hash, org_id, user_id, created_at, expires_at, kind, parent_id) VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, org_id, user_id, expires_at, revoked_at`,
    [s.token_hash, s.org_id, s.user_id, s.now, s.expires_at, s.kind, s.parent_id],
  );
  return row!;
}

/** `token`: bootstrap or CLI, may be traded for a browser session; `browser`: never traded again. */
export type SessionKind = 'token' | 'browser';

export interface AuthenticatedSession {
  session_id: string;
  kind: SessionKind;
  expires_at: Date;
  org_id: string;
  user_id: string;
  role: Role;
  membership_status: MembershipStatus;
  user_active: boolean;
  email: string | null;
}

/**
 * Resolves a live session together with the membership it acts through, so
 * a deprovisioned user is refused on the very next call.
 */
export async function session_authenticate(q: Queryable, tokenHash: string, now: Date): Promise<AuthenticatedSession | undefined> {
  const [row] = await q.query<AuthenticatedSession>(
    `SELECT s.id AS session_id, s.kind, s.expires_at, s.org_id, s.user_id, m.role, m.status AS membership_status, u.active AS user_active,
            (SELECT e->>'value' FROM jsonb_array_elements(u.emails) e ORDER BY (e->>'primary')::boolean IS TRUE DESC LIMIT 1) AS email
       FROM console_sessions s
       JOIN users u ON u.id = s.user_id
       JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`,
    [tokenHash, now],
  );
  return row;
}

/**
 * A session that was found but has run out: the caller holds the real token
 * (its hash matched), so saying it expired, and for which org, reveals nothing.
 */
export async function session_find_expired(q: Queryable, tokenHash: string, now: Date): Promise<{ expires_at: Date; org_slug: string } | undefined> {
  const [row] = await q.query<{ expires_at: Date; org_slug: string }>(
    `SELECT s.expires_at, o.slug AS org_slug FROM console_sessions s JOIN orgs o ON o.id = s.org_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at <= $2`,
    [tokenHash, now],
  );
  return row;
}

/** Ends a session and the browser sessions traded for it. */
export async function session_revoke(q: Queryable, sessionId: string, now: Date): Promise<void> {
  await q.query(`UPDATE console_sessions SET revoked_at = $2 WHERE (id = $1 OR parent_id = $1) AND revoked_at IS NULL`, [sessionId, now]);
}

/** Ends every console session of a user: deprovisioning, "sign out everywhere". */
export async function session_revoke_all_for_user(q: Queryable, orgId: string, userId: string, now: Date): Promise<number> {
  const rows = await q.query(`UPDATE console_sessions SET revoked_at = $3 WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id`, [
    orgId,
    userId,
    now,
  ]);
  return rows.length;
}
