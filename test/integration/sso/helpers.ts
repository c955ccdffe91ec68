import { expect } from 'chai';
import type { ControlPlaneDeps } from '../../../control-plane/deps.js';
import type { Role, UserSource } from '../../../control-plane/domain.js';
import { membership_insert } from '../../../control-plane/stores/memberships.js';
import { user_insert } from '../../../control-plane/stores/users.js';
import { openSession } from '../../../control-plane/services/auth/sessions.js';
import { call, type TestControlPlane } from '../../support/control-plane.js';
import type { TestIdp } from '../../support/oidc-provider.js';
import type { Hop } from './browser.js';

/** Saves the org's SSO settings through the console API, as its owner. */
export async function configureSso(
  cp: TestControlPlane,
  org: { org_id: string; console_token: string },
  idp: TestIdp,
  extra: { external_id_claim?: string; client_secret?: string; issuer?: string } = {},
): Promise<void> {
  const res = await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, {
    method: 'PUT',
    token: org.console_token,
    body: {
      issuer: extra.issuer ?? idp.issuer,
      client_id: idp.clientId,
      client_secret: extra.client_secret ?? idp.clientSecret,
      ...(extra.external_id_claim ? { external_id_claim: extra.external_id_claim } : {}),
    },
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

export interface SeededUser {
  userId: string;
  token: string;
}

/**
 * A user and membership written with the store functions, the way SCIM
 * provisioning leaves them (the SCIM endpoints are tested on their own).
 */
export async function seedUser(
  deps: ControlPlaneDeps,
  orgId: string,
  u: {
    user_name: string;
    external_id?: string | null;
    email?: string;
    source?: UserSource;
    role?: Role;
    active?: boolean;
    status?: 'active' | 'inactive';
  },
): Promise<SeededUser> {
  return deps.db.transaction(async (tx) => {
    const user = await user_insert(
      tx,
      orgId,
      u.source ?? 'scim',
      {
        user_name: u.user_name,
        external_id: u.external_id ?? null,
        given_name: null,
        family_name: null,
        display_name: null,
        emails: u.email ? [{ value: u.email, primary: true }] : [],
        active: u.active ?? true,
      },
      new Date(),
    );
    await membership_insert(tx, { org_id: orgId, user_id: user.id, role: u.role ?? 'member', status: u.status ?? 'active' });
    const session = await openSession(deps, tx, orgId, user.id);
    return { userId: user.id, token: session.token };
  });
}

/** A refusal from the SSO routes: an HTML page with the status and the reason, never JSON or a stack. */
export function expectPage(hop: Hop, status: number, says: RegExp): void {
  expect(hop.status, hop.text.slice(0, 300)).to.equal(status);
  expect(hop.headers.get('content-type')).to.match(/^text\/html/);
  expect(hop.text).to.match(says);
  expect(hop.text).not.to.match(/\bat [\w.<>]+ \(|node:internal|Error:/);
}
