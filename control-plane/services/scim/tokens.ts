import { conflict, isUniqueViolation } from '../../../shared/errors.js';
import { displayPrefix, generateSecret, isWellFormedSecret, sha256Hex } from '../../../shared/secrets.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { audit_insert } from '../../stores/audit.js';
import { org_find_by_id, org_set_scim_enabled } from '../../stores/orgs.js';
import { scim_token_authenticate, scim_token_find_active, scim_token_rotate } from '../../stores/scim-tokens.js';
import { scimBaseUrl } from './resource.js';

/** Settings → SCIM as the console shows it: never the token itself, only its prefix and age. */
export interface ScimSettings {
  enabled: boolean;
  base_url: string;
  token: null | { prefix: string; created_at: string };
}

export async function scimSettings(deps: ControlPlaneDeps, orgId: string): Promise<ScimSettings> {
  const [org, token] = await Promise.all([org_find_by_id(deps.db, orgId), scim_token_find_active(deps.db, orgId)]);
  return {
    enabled: org?.scim_enabled ?? false,
    base_url: scimBaseUrl(deps.config.publicBaseUrl, orgId),
    token: token ? { prefix: token.prefix, created_at: new Date(token.created_at).toISOString() } : null,
  };
}

export async function setScimEnabled(deps: ControlPlaneDeps, orgId: string, actorUserId: string, enabled: boolean): Promise<ScimSettings> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await org_set_scim_enabled(tx, orgId, enabled);
    await audit_insert(tx, {
      org_id: orgId,
      actor: `user:${actorUserId}`,
      action: enabled ? 'scim.enable' : 'scim.disable',
      target_type: 'org',
      target_id: orgId,
      now,
    });
  });
  return scimSettings(deps, orgId);
}

/**
 * Generates the organization's one provisioning token. The previous token is
 * revoked in the same transaction, so it stops working the moment the new
 * one exists (one active token per organization). The plaintext is returned once.
 */
export async function rotateScimToken(
  deps: ControlPlaneDeps,
  orgId: string,
  actorUserId: string,
): Promise<{ token: string; prefix: string; created_at: string }> {
  const token = generateSecret('scimToken');
  const prefix = displayPrefix(token);
  const now = deps.clock.now();
  try {
    const row = await deps.db.transaction(async (tx) => {
      const created = await scim_token_rotate(tx, { org_id: orgId, token_hash: sha256Hex(token), prefix, now });
      await audit_insert(tx, {
        org_id: orgId,
        actor: `user:${actorUserId}`,
        action: 'scim.token.rotate',
        target_type: 'scim_token',
        target_id: created.id,
        detail: { prefix },
        now,
      });
      return created;
    });
    return { token, prefix: row.prefix, created_at: new Date(row.created_at).toISOString() };
  } catch (err) {
    // Two admins generating at the same instant meet at the one-active-token index.
    if (isUniqueViolation(err)) throw conflict('Another provisioning token was generated at the same time; try again.');
    throw err;
  }
}

/**
 * The organization a presented provisioning token belongs to, or undefined.
 * Anything that is not a well-formed `tgp_` secret (console tokens, API keys,
 * garbage) is refused before any lookup; a revoked token or one of an org
 * with SCIM disabled resolves to nothing.
 */
export async function authenticateScimToken(deps: ControlPlaneDeps, presented: string): Promise<string | undefined> {
  if (!isWellFormedSecret(presented, 'scimToken')) return undefined;
  const row = await scim_token_authenticate(deps.db, sha256Hex(presented));
  return row?.org_id;
}
