import type { Queryable } from '../db/database.js';
import type { ApiKey } from '../domain.js';

export interface GatewaySigninSettings {
  org_id: string;
  team_id: string;
  workspace_id: string;
  budget_usd: number | null;
}

export interface DeviceGrant {
  id: string;
  user_code: string;
  client_version: string | null;
  status: 'pending' | 'approved' | 'denied' | 'used';
  org_id: string | null;
  user_id: string | null;
  interval_s: number;
  last_polled_at: Date | null;
  expires_at: Date;
}

export interface GatewaySession {
  id: string;
  org_id: string;
  user_id: string;
  team_id: string;
  client_version: string | null;
  revoked_at: Date | null;
  expires_at: Date;
  created_at: Date;
}

export async function gateway_signin_settings_find(q: Queryable, orgId: string): Promise<GatewaySigninSettings | undefined> {
  const [row] = await q.query<GatewaySigninSettings>(
    `SELECT s.org_id, s.team_id, t.workspace_id, s.budget_usd::float8 AS budget_usd
       FROM gateway_signin_settings s JOIN teams t ON t.id = s.team_id WHERE s.org_id = $1`,
    [orgId],
  );
  return row;
}

export async function gateway_signin_settings_upsert(
  q: Queryable,
  orgId: string,
  teamId: string,
  budgetUsd: number | null,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO gateway_signin_settings (org_id, team_id, budget_usd, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id) DO UPDATE SET team_id = $2, budget_usd = $3, updated_at = $4`,
    [orgId, teamId, budgetUsd, now],
  );
}

const GRANT_COLUMNS = 'id, user_code, client_version, status, org_id, user_id, interval_s, last_polled_at, expires_at';

export async function device_grant_insert(
  q: Queryable,
  g: { device_code_hash: string; user_code: string; client_version: string | null; interval_s: number; expires_at: Date; now: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO gateway_device_grants (device_code_hash, user_code, client_version, interval_s, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [g.device_code_hash, g.user_code, g.client_version, g.interval_s, g.expires_at, g.now],
  );
}

/** Locked: two polls of one device code must not both mint a session. */
export async function device_grant_lock_by_device_code(q: Queryable, deviceCodeHash: string): Promise<DeviceGrant | undefined> {
  const [row] = await q.query<DeviceGrant>(`SELECT ${GRANT_COLUMNS} FROM gateway_device_grants WHERE device_code_hash = $1 FOR UPDATE`, [
    deviceCodeHash,
  ]);
  return row;
}

export async function device_grant_find_pending_by_user_code(q: Queryable, userCode: string, now: Date): Promise<DeviceGrant | undefined> {
  const [row] = await q.query<DeviceGrant>(
    `SELECT ${GRANT_COLUMNS} FROM gateway_device_grants WHERE user_code = $1 AND status = 'pending' AND expires_at > $2 FOR UPDATE`,
    [userCode, now],
  );
  return row;
}

export async function device_grant_polled(q: Queryable, id: string, now: Date, intervalS: number): Promise<void> {
  await q.query(`UPDATE gateway_device_grants SET last_polled_at = $2, interval_s = $3 WHERE id = $1`, [id, now, intervalS]);
}

export async function device_grant_decide(
  q: Queryable,
  id: string,
  decision: { status: 'approved' | 'denied' | 'used'; org_id?: string; user_id?: string },
): Promise<void> {
  await q.query(`UPDATE gateway_device_grants SET status = $2, org_id = COALESCE($3, org_id), user_id = COALESCE($4, user_id) WHERE id = $1`, [
    id,
    decision.status,
    decision.org_id ?? null,
    decision.user_id ?? null,
  ]);
}

const SESSION_COLUMNS = 'id, org_id, user_id, team_id, client_version, revoked_at, expires_at, created_at';

export async function gateway_session_insert(
  q: Queryable,
  s: { org_id: string; user_id: string; team_id: string; client_version: string | null; expires_at: Date; now: Date },
): Promise<GatewaySession> {
  const [row] = await q.query<GatewaySession>(
    `INSERT INTO gateway_sessions (org_id, user_id, team_id, client_version, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${SESSION_COLUMNS}`,
    [s.org_id, s.user_id, s.team_id, s.client_version, s.expires_at, s.now],
  );
  return row!;
}

export async function gateway_refresh_token_insert(q: Queryable, sessionId: string, tokenHash: string, now: Date): Promise<void> {
  await q.query(`INSERT INTO gateway_refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)`, [tokenHash, sessionId, now]);
}

/** The refresh token's row and its session, locked so a token is spent once. */
export async function gateway_refresh_token_lock(
  q: Queryable,
  tokenHash: string,
): Promise<{ used_at: Date | null; session: GatewaySession } | undefined> {
  const [row] = await q.query<{ used_at: Date | null } & GatewaySession>(
    `SELECT r.used_at, ${SESSION_COLUMNS.split(', ')
      .map((c) => `s.${c}`)
      .join(', ')}
       FROM gateway_refresh_tokens r JOIN gateway_sessions s ON s.id = r.session_id
      WHERE r.token_hash = $1 FOR UPDATE OF r, s`,
    [tokenHash],
  );
  if (!row) return undefined;
  const { used_at, ...session } = row;
  return { used_at, session };
}

export async function gateway_refresh_token_spend(q: Queryable, tokenHash: string, now: Date): Promise<void> {
  await q.query(`UPDATE gateway_refresh_tokens SET used_at = $2 WHERE token_hash = $1`, [tokenHash, now]);
}

/**
 * Ends sessions and revokes their live access keys; returns the keys, whose
 * change the caller publishes. Narrowed to one session, or to all of a user's.
 */
export async function gateway_session_revoke(
  q: Queryable,
  orgId: string,
  target: { sessionId?: string; userId?: string },
  reason: string,
  now: Date,
): Promise<{ sessions: string[]; keys: Pick<ApiKey, 'id'>[] }> {
  const sessions = await q.query<{ id: string }>(
    `UPDATE gateway_sessions SET revoked_at = $4, revoked_reason = $5
      WHERE org_id = $1 AND ($2::uuid IS NULL OR id = $2) AND ($3::uuid IS NULL OR user_id = $3) AND revoked_at IS NULL RETURNING id`,
    [orgId, target.sessionId ?? null, target.userId ?? null, now, reason],
  );
  if (sessions.length === 0) return { sessions: [], keys: [] };
  const ids = sessions.map((s) => s.id);
  const keys = await q.query<{ id: string }>(
    `UPDATE api_keys SET revoked_at = $2 WHERE gateway_session_id = ANY($1::uuid[]) AND revoked_at IS NULL RETURNING id`,
    [ids, now],
  );
  return { sessions: ids, keys };
}

/** The session's access key still in force, if any (a session has one key; a refresh gives it a new secret). */
export async function gateway_session_live_key(q: Queryable, sessionId: string): Promise<{ id: string } | undefined> {
  const [row] = await q.query<{ id: string }>(
    `SELECT id FROM api_keys WHERE gateway_session_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1`,
    [sessionId],
  );
  return row;
}

export async function api_key_attach_gateway_session(q: Queryable, keyId: string, sessionId: string): Promise<void> {
  await q.query(`UPDATE api_keys SET gateway_session_id = $2 WHERE id = $1`, [keyId, sessionId]);
}

/** A member's signed-in devices with when their latest key was last used. */
export async function gateway_session_list_for_user(
  q: Queryable,
  orgId: string,
  userId: string,
): Promise<(GatewaySession & { last_used_at: Date | null })[]> {
  return q.query(
    `SELECT ${SESSION_COLUMNS.split(', ')
      .map((c) => `s.${c}`)
      .join(', ')},
            (SELECT max(k.last_used_at) FROM api_keys k WHERE k.gateway_session_id = s.id) AS last_used_at
       FROM gateway_sessions s WHERE s.org_id = $1 AND s.user_id = $2 ORDER BY s.created_at DESC, s.id`,
    [orgId, userId],
  );
}

/** The session a token belongs to: a refresh token's, or an access key's. */
export async function gateway_session_find_by_token_hash(q: Queryable, tokenHash: string): Promise<GatewaySession | undefined> {
  const [row] = await q.query<GatewaySession>(
    `SELECT ${SESSION_COLUMNS} FROM gateway_sessions
      WHERE id = (SELECT session_id FROM gateway_refresh_tokens WHERE token_hash = $1)
         OR id = (SELECT gateway_session_id FROM api_keys WHERE key_hash = $1)`,
    [tokenHash],
  );
  return row;
}
