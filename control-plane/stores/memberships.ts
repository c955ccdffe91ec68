import type { Queryable } from '../db/database.js';
import type { Membership, MembershipStatus, Role, User } from '../domain.js';

const COLUMNS = 'org_id, user_id, role, status';

export async function membership_insert(
  q: Queryable,
  m: { org_id: string; user_id: string; role: Role; status: MembershipStatus },
): Promise<Membership> {
  const [row] = await q.query<Membership>(`INSERT INTO memberships (org_id, user_id, role, status) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`, [
    m.org_id,
    m.user_id,
    m.role,
    m.status,
  ]);
  return row!;
}

export async function membership_find(q: Queryable, orgId: string, userId: string): Promise<Membership | undefined> {
  const [row] = await q.query<Membership>(`SELECT ${COLUMNS} FROM memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
  return row;
}

export async function membership_list_for_user(q: Queryable, userId: string): Promise<Membership[]> {
  return q.query<Membership>(`SELECT ${COLUMNS} FROM memberships WHERE user_id = $1 ORDER BY org_id`, [userId]);
}

export async function membership_set_status(
  q: Queryable,
  orgId: string,
  userId: string,
  status: MembershipStatus,
  now: Date,
): Promise<Membership | undefined> {
  const [row] = await q.query<Membership>(
    `UPDATE memberships SET status = $3, updated_at = $4 WHERE org_id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
    [orgId, userId, status, now],
  );
  return row;
}

export async function membership_set_role(q: Queryable, orgId: string, userId: string, role: Role, now: Date): Promise<Membership | undefined> {
  const [row] = await q.query<Membership>(
    `UPDATE memberships SET role = $3, updated_at = $4 WHERE org_id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
    [orgId, userId, role, now],
  );
  return row;
}

/**
 * Locks the org's active owner rows and returns their user ids, so that two
 * concurrent demotions cannot both see "another owner remains".
 */
export async function membership_lock_active_owners(q: Queryable, orgId: string): Promise<string[]> {
  const rows = await q.query<{ user_id: string }>(
    `SELECT user_id FROM memberships WHERE org_id = $1 AND role = 'owner' AND status = 'active' ORDER BY user_id FOR UPDATE`,
    [orgId],
  );
  return rows.map((r) => r.user_id);
}

/** A member as Settings → Members lists them: the membership, the person, and their primary email. */
export type MemberRow = Pick<Membership, 'user_id' | 'role' | 'status'> &
  Pick<User, 'user_name' | 'given_name' | 'family_name' | 'display_name' | 'source'> & { email: string | null };

const MEMBER_SELECT = `SELECT m.user_id, u.user_name, u.given_name, u.family_name, u.display_name,
       COALESCE((SELECT e->>'value' FROM jsonb_array_elements(u.emails) e ORDER BY (e->>'primary')::boolean IS TRUE DESC LIMIT 1), NULL) AS email,
       m.role, m.status, u.source
  FROM memberships m JOIN users u ON u.id = m.user_id AND u.org_id = m.org_id`;

export async function member_list(q: Queryable, orgId: string): Promise<MemberRow[]> {
  return q.query<MemberRow>(`${MEMBER_SELECT} WHERE m.org_id = $1 ORDER BY lower(u.user_name)`, [orgId]);
}

export async function member_find(q: Queryable, orgId: string, userId: string): Promise<MemberRow | undefined> {
  const [row] = await q.query<MemberRow>(`${MEMBER_SELECT} WHERE m.org_id = $1 AND m.user_id = $2`, [orgId, userId]);
  return row;
}
