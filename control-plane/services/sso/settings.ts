import type { ControlPlaneDeps } from '../../deps.js';
import type { SsoSettings } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { sso_login_state_delete_for_org } from '../../stores/sso-login-states.js';
import { sso_settings_delete, sso_settings_find, sso_settings_upsert } from '../../stores/sso-settings.js';
import { invalidInput } from '../../../shared/errors.js';
import { actorOf, assertOrgAdmin, assertOrgOwner, type ConsoleAuth } from '../auth/console-auth.js';
import { urlRefusal } from '../outbound/guard.js';
import type { SecretSealer } from './secrets.js';

/** What the console sees of an org's OIDC settings: never the client secret. */
export interface SsoSettingsView {
  issuer: string;
  client_id: string;
  external_id_claim: string;
}

export interface SsoSettingsInput extends SsoSettingsView {
  client_secret: string;
}

/** Binds a sealed client secret to its org: a sealed value copied to another org's row does not open. */
export function clientSecretContext(orgId: string): string {
  return `sso_settings.client_secret:${orgId}`;
}

export function viewOf(s: SsoSettings): SsoSettingsView {
  return { issuer: s.issuer, client_id: s.client_id, external_id_claim: s.external_id_claim };
}

export async function findSsoSettings(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId: string | undefined): Promise<SsoSettingsView | undefined> {
  const orgId = assertOrgAdmin(auth, rawOrgId);
  const s = await sso_settings_find(deps.db, orgId);
  return s && viewOf(s);
}

/**
 * Whoever sets the identity provider decides who signs in as whom, owners
 * included: an admin who could point SSO at an IdP of their own could sign in
 * as the owner. Saving is therefore the owner's alone.
 */
export const OWNER_ONLY_SSO =
  'the identity provider (issuer, client id and secret) decides who signs in as whom, the owner included, so only an owner may set it. Ask an owner of this organization.';

/** Refuses (400) an issuer the outbound rules would never let us call, so the mistake shows when it is saved rather than at the first login. */
export function assertIssuerAllowed(deps: ControlPlaneDeps, issuer: string): void {
  const refusal = urlRefusal(issuer, { allowPrivate: deps.config.ssoAllowPrivateIssuers });
  if (refusal) {
    const hint = deps.config.ssoAllowPrivateIssuers
      ? ''
      : ' (an identity provider on a private network needs SSO_ALLOW_PRIVATE_ISSUERS=true on the server)';
    throw invalidInput(`issuer: ${refusal}${hint}.`);
  }
}

export async function saveSsoSettings(
  deps: ControlPlaneDeps,
  sealer: SecretSealer,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  input: SsoSettingsInput,
): Promise<SsoSettingsView> {
  const orgId = assertOrgOwner(auth, rawOrgId, OWNER_ONLY_SSO);
  assertIssuerAllowed(deps, input.issuer);
  // Sealed before the transaction: a missing SECRETS_KEY refuses the request without touching the store.
  const client_secret_sealed = sealer.seal(input.client_secret, clientSecretContext(orgId));
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const previous = await sso_settings_find(tx, orgId);
    const saved = await sso_settings_upsert(
      tx,
      { org_id: orgId, issuer: input.issuer, client_id: input.client_id, client_secret_sealed, external_id_claim: input.external_id_claim },
      now,
    );
    await audit_insert(tx, {
      org_id: orgId,
      actor: actorOf(auth),
      action: previous ? 'sso.settings_update' : 'sso.settings_create',
      target_type: 'org',
      target_id: orgId,
      detail: { issuer: saved.issuer, client_id: saved.client_id, external_id_claim: saved.external_id_claim, client_secret: 'set' },
      now,
    });
    return viewOf(saved);
  });
}

/**
 * Turns SSO off: the settings (and sealed secret) are removed and logins in
 * flight are dropped. Existing console sessions are left alone; deprovision
 * people to end theirs. Returns false when SSO was not configured.
 */
export async function removeSsoSettings(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId: string | undefined): Promise<boolean> {
  const orgId = assertOrgAdmin(auth, rawOrgId);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const removed = await sso_settings_delete(tx, orgId);
    if (!removed) return false;
    await sso_login_state_delete_for_org(tx, orgId);
    await audit_insert(tx, {
      org_id: orgId,
      actor: actorOf(auth),
      action: 'sso.settings_delete',
      target_type: 'org',
      target_id: orgId,
      detail: { issuer: removed.issuer, client_id: removed.client_id },
      now,
    });
    return true;
  });
}
