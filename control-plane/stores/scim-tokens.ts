import type { Queryable } from '../db/database.js';
import type { ScimToken } from '../domain.js';

export async function scim_token_find_active(q: Queryable, orgId: string): Promise<ScimToken | undefined> {
  const [row] = await q.query<ScimToken>(`SELECT id, org_id, prefix, created_at FROM scim_tokens WHERE org_id = $1 AND revoked_at IS NULL`, [orgId]);
  return row;
}

/** Revokes the active token and inserts the new one in the caller's transaction. */
export async function scim_token_rotate(q: Queryable, t: { org_id: string; token_hash: string; prefix: string; now: Date }): Promise<ScimToken> {
  await q.query(`UPDATE scim_tokens SET revoked_at = $2 WHERE org_id = $1 AND revoked_at IS NULL`, [t.org_id, t.now]);
  const [row] = await q.query<ScimToken>(
    `INSERT INTO scim_tokens (org_id, token_hash, prefix, created_at) VALUES ($1, $2, $3, $4)
     RETURNING id, org_id, prefix, created_at`,
    [t.org_id, t.token_hash, t.prefix, t.now],
  );
  return row!;
}

/** The org a presented token belongs to, only while it is active and SCIM is enabled. */
export async function scim_token_authenticate(q: Queryable, tokenHash: string): Promise<{ org_id: string } | undefined> {
  const [row] = await q.query<{ org_id: string }>(
    `SELECT t.org_id FROM scim_tokens t JOIN orgs o ON o.id = t.org_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND o.scim_enabled`,
    [tokenHash],
  );
  return row;
}
