import type { Queryable } from '../db/database.js';
import type { Org } from '../domain.js';

const COLUMNS = 'id, slug, name, scim_enabled, members_edit_own_keys, created_at';

export async function org_insert(q: Queryable, input: { slug: string; name: string }): Promise<Org> {
  const [row] = await q.query<Org>(`INSERT INTO orgs (slug, name) VALUES ($1, $2) RETURNING ${COLUMNS}`, [input.slug, input.name]);
  return row!;
}

export async function org_find_by_id(q: Queryable, id: string): Promise<Org | undefined> {
  const [row] = await q.query<Org>(`SELECT ${COLUMNS} FROM orgs WHERE id = $1`, [id]);
  return row;
}

export async function org_find_by_slug(q: Queryable, slug: string): Promise<Org | undefined> {
  const [row] = await q.query<Org>(`SELECT ${COLUMNS} FROM orgs WHERE slug = $1`, [slug]);
  return row;
}

export async function org_set_scim_enabled(q: Queryable, id: string, enabled: boolean): Promise<Org> {
  const [row] = await q.query<Org>(`UPDATE orgs SET scim_enabled = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, enabled]);
  return row!;
}

export async function org_set_members_edit_own_keys(q: Queryable, id: string, allowed: boolean): Promise<Org | undefined> {
  const [row] = await q.query<Org>(`UPDATE orgs SET members_edit_own_keys = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, allowed]);
  return row;
}
