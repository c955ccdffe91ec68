import type { Queryable } from '../db/database.js';

export interface SsoLoginState {
  state_hash: string;
  org_id: string;
  sealed_checks: string;
  expires_at: Date;
}

export async function sso_login_state_insert(q: Queryable, s: SsoLoginState, now: Date): Promise<void> {
  await q.query(`INSERT INTO sso_login_states (state_hash, org_id, sealed_checks, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`, [
    s.state_hash,
    s.org_id,
    s.sealed_checks,
    now,
    s.expires_at,
  ]);
}

/** Deletes and returns the pending login: a state is usable once, even when two callbacks race. */
export async function sso_login_state_take(q: Queryable, stateHash: string): Promise<SsoLoginState | undefined> {
  const [row] = await q.query<SsoLoginState>(
    `DELETE FROM sso_login_states WHERE state_hash = $1 RETURNING state_hash, org_id, sealed_checks, expires_at`,
    [stateHash],
  );
  return row;
}

/** Abandoned logins (the user never came back from the IdP) are swept as new ones start. */
export async function sso_login_state_delete_expired(q: Queryable, now: Date): Promise<number> {
  const rows = await q.query(`DELETE FROM sso_login_states WHERE expires_at <= $1 RETURNING state_hash`, [now]);
  return rows.length;
}

/** Turning SSO off abandons the org's logins in flight. */
export async function sso_login_state_delete_for_org(q: Queryable, orgId: string): Promise<number> {
  const rows = await q.query(`DELETE FROM sso_login_states WHERE org_id = $1 RETURNING state_hash`, [orgId]);
  return rows.length;
}
