import type { Queryable } from '../db/database.js';
import type { User, UserSource } from '../domain.js';
import { userFilterSql, type UserFilter } from './users-filter.js';

const COLUMNS =
  'id, org_id, user_name, external_id, given_name, family_name, name_formatted, display_name, emails, active, source, created_at, updated_at';

/** What a SCIM client or an IdP says about a person: a user row less what the store decides. */
export type UserFields = Pick<User, 'user_name' | 'external_id' | 'given_name' | 'family_name' | 'display_name' | 'emails' | 'active'> & {
  /** Left out: a new user has none, an update keeps the stored one. */
  name_formatted?: string | null;
};

export async function user_insert(q: Queryable, orgId: string, source: UserSource, f: UserFields, now: Date): Promise<User> {
  const [row] = await q.query<User>(
    `INSERT INTO users (org_id, user_name, external_id, given_name, family_name, name_formatted, display_name, emails, active, source, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING ${COLUMNS}`,
    [
      orgId,
      f.user_name,
      f.external_id,
      f.given_name,
      f.family_name,
      f.name_formatted ?? null,
      f.display_name,
      JSON.stringify(f.emails),
      f.active,
      source,
      now,
    ],
  );
  return row!;
}

/** Every lookup takes the org id: a user is never reachable from another org. */
export async function user_find_by_id(q: Queryable, orgId: string, id: string): Promise<User | undefined> {
  const [row] = await q.query<User>(`SELECT ${COLUMNS} FROM users WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return row;
}

/** Same, with a row lock so concurrent PATCHes of one user apply one after the other. */
export async function user_lock_by_id(q: Queryable, orgId: string, id: string): Promise<User | undefined> {
  const [row] = await q.query<User>(`SELECT ${COLUMNS} FROM users WHERE org_id = $1 AND id = $2 FOR UPDATE`, [orgId, id]);
  return row;
}

export async function user_find_by_user_name(q: Queryable, orgId: string, userName: string): Promise<User | undefined> {
  const [row] = await q.query<User>(`SELECT ${COLUMNS} FROM users WHERE org_id = $1 AND lower(user_name) = lower($2)`, [orgId, userName]);
  return row;
}

export async function user_find_by_external_id(q: Queryable, orgId: string, externalId: string): Promise<User | undefined> {
  const [row] = await q.query<User>(`SELECT ${COLUMNS} FROM users WHERE org_id = $1 AND external_id = $2 LIMIT 1`, [orgId, externalId]);
  return row;
}

/** Paged search for SCIM; `offset` is 0-based, `filter` undefined lists everyone. */
export async function user_search(
  q: Queryable,
  orgId: string,
  filter: UserFilter | undefined,
  offset: number,
  limit: number,
): Promise<{ total: number; users: User[] }> {
  const params: unknown[] = [orgId];
  const clause = filter ? `org_id = $1 AND ${userFilterSql(filter, params)}` : 'org_id = $1';
  const users = await q.query<User>(
    `SELECT ${COLUMNS} FROM users WHERE ${clause} ORDER BY created_at, id OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
    [...params, offset, limit],
  );
  // A page that is not full ends the list: its end is the total, without reading the matches again.
  if (users.length < limit && (users.length > 0 || offset === 0)) return { total: offset + users.length, users };
  const [count] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE ${clause}`, params);
  return { total: count!.n, users };
}

/** Replaces the mutable attributes; user_name is immutable and never written here. */
export async function user_update(q: Queryable, orgId: string, id: string, f: Omit<UserFields, 'user_name'>, now: Date): Promise<User | undefined> {
  const [row] = await q.query<User>(
    `UPDATE users SET external_id = $3, given_name = $4, family_name = $5, display_name = $6, emails = $7, active = $8, updated_at = $9,
       name_formatted = CASE WHEN $10 THEN $11 ELSE name_formatted END
     WHERE org_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      orgId,
      id,
      f.external_id,
      f.given_name,
      f.family_name,
      f.display_name,
      JSON.stringify(f.emails),
      f.active,
      now,
      f.name_formatted !== undefined,
      f.name_formatted ?? null,
    ],
  );
  return row;
}

export async function user_delete(q: Queryable, orgId: string, id: string): Promise<boolean> {
  const rows = await q.query(`DELETE FROM users WHERE org_id = $1 AND id = $2 RETURNING id`, [orgId, id]);
  return rows.length > 0;
}

/**
 * Bounds every later statement of the transaction `tx` to `ms` (PostgreSQL's
 * `SET LOCAL statement_timeout`, as a parameter). The embedded PGlite
 * accepts the setting but has no timer to enforce it; there the callers'
 * own caps on the query's size are the bound.
 */
export async function statement_timeout_set_local(tx: Queryable, ms: number): Promise<void> {
  await tx.query(`SELECT set_config('statement_timeout', $1, true)`, [String(ms)]);
}

/** PostgreSQL's query_canceled: a statement ran past its statement_timeout. */
export function isStatementTimeout(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '57014';
}

/** The SSO identity the account itself confirmed (migration 100), or null. */
export async function user_sso_confirmed_find(q: Queryable, orgId: string, id: string): Promise<string | null> {
  const [row] = await q.query<{ sso_confirmed_external_id: string | null }>(
    'SELECT sso_confirmed_external_id FROM users WHERE org_id = $1 AND id = $2',
    [orgId, id],
  );
  return row?.sso_confirmed_external_id ?? null;
}

/** Records that a session of the account itself linked it to `externalId`. */
export async function user_sso_confirm(q: Queryable, orgId: string, id: string, externalId: string): Promise<void> {
  await q.query('UPDATE users SET sso_confirmed_external_id = $3 WHERE org_id = $1 AND id = $2', [orgId, id, externalId]);
}
