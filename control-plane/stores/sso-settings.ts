import type { Queryable } from '../db/database.js';
import type { SsoSettings } from '../domain.js';

const COLUMNS = 'org_id, issuer, client_id, client_secret_sealed, external_id_claim, updated_at';

export async function sso_settings_upsert(q: Queryable, s: Omit<SsoSettings, 'updated_at'>, now: Date): Promise<SsoSettings> {
  const [row] = await q.query<SsoSettings>(
    `INSERT INTO sso_settings (org_id, issuer, client_id, client_secret_sealed, external_id_claim, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (org_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
       client_secret_sealed = EXCLUDED.client_secret_sealed, external_id_claim = EXCLUDED.external_id_claim,
       updated_at = EXCLUDED.updated_at
     RETURNING ${COLUMNS}`,
    [s.org_id, s.issuer, s.client_id, s.client_secret_sealed, s.external_id_claim, now],
  );
  return row!;
}

export async function sso_settings_find(q: Queryable, orgId: string): Promise<SsoSettings | undefined> {
  const [row] = await q.query<SsoSettings>(`SELECT ${COLUMNS} FROM sso_settings WHERE org_id = $1`, [orgId]);
  return row;
}

export async function sso_settings_delete(q: Queryable, orgId: string): Promise<SsoSettings | undefined> {
  const [row] = await q.query<SsoSettings>(`DELETE FROM sso_settings WHERE org_id = $1 RETURNING ${COLUMNS}`, [orgId]);
  return row;
}
