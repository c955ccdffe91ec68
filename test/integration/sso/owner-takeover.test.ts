import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startTestIdp, type TestIdp } from '../../support/oidc-provider.js';
import { ERROR_SCHEMA, PATCH_OP } from '../../support/scim.js';
import { SESSION_COOKIE } from '../../../control-plane/http/auth.js';
import { ssoLogin, TestBrowser } from './browser.js';
import { configureSso, expectPage, seedUser } from './helpers.js';

/**
 * Security round two, finding 3 (docs/security.md): an admin holding the
 * SCIM token cannot make the owner's account answer to the admin's own
 * identity-provider login, and the audit log says who really signed in.
 */

interface AuditRow {
  actor: string;
  action: string;
  target_id: string | null;
  detail: Record<string, unknown> | null;
}

describeEachStore('sso + scim: an admin cannot become the owner by rewriting who the owner is', (store) => {
  let cp: TestControlPlane;
  let idp: TestIdp;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    idp = await startTestIdp(`${cp.url}/v1/auth/sso/callback`);
  });
  after(async () => {
    await idp.close();
    await cp.close();
  });

  const me = (browser: TestBrowser) =>
    call(`${cp.url}/v1/me`, { headers: { cookie: `${SESSION_COOKIE}=${browser.cookie(cp.url, SESSION_COOKIE)}` } });
  const audit = (orgId: string, action: string) =>
    store.db.query<AuditRow>('SELECT actor, action, target_id, detail FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY created_at', [
      orgId,
      action,
    ]);
  const externalIdOf = async (userId: string) =>
    (await store.db.query<{ external_id: string | null }>('SELECT external_id FROM users WHERE id = $1', [userId]))[0]!.external_id;

  /** An org with SSO on the test IdP, and an admin whose own IdP login (`mallory-sub`) is linked to the admin's account. */
  async function orgWithAdmin() {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    const admin = await seedUser(cp.deps, org.org_id, { user_name: 'mallory@example.test', email: 'mallory@example.test', role: 'admin' });
    idp.signInAs({ sub: 'mallory-sub', email: 'mallory@example.test', email_verified: true });
    // The admin links their own account the documented way: signed in to the console, then the SSO link.
    const linking = new TestBrowser();
    linking.setCookie(cp.url, SESSION_COOKIE, admin.token);
    expect((await ssoLogin(linking, cp.url, org.org_slug)).status).to.equal(302);
    expect(await externalIdOf(admin.userId)).to.equal('mallory-sub');
    return { org, admin };
  }

  it("the issue's sequence: the admin mints the SCIM token, sets the owner's externalId to their own login, signs in by SSO — and lands in their own account", async () => {
    const { org, admin } = await orgWithAdmin();
    const settings = `${cp.url}/v1/orgs/${org.org_id}/scim`;
    expect((await call(settings, { method: 'PUT', token: admin.token, body: { enabled: true } })).status).to.equal(200);
    const minted = await call(`${settings}/token`, { method: 'POST', token: admin.token });
    expect(minted.status).to.equal(201);

    const patched = await call(`${cp.url}/v1/scim/v2/orgs/${org.org_id}/Users/${org.owner_user_id}`, {
      method: 'PATCH',
      token: minted.body.token as string,
      headers: { 'content-type': 'application/scim+json' },
      body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value: 'mallory-sub' }] },
    });
    expect(patched.status).to.equal(400);
    expect(patched.body).to.deep.include({ schemas: [ERROR_SCHEMA], scimType: 'mutability', status: '400' });
    expect(patched.body.detail).to.match(/owner of the organization; SCIM cannot change their externalId/);
    expect(await externalIdOf(org.owner_user_id)).to.not.equal('mallory-sub');
    const refused = await audit(org.org_id, 'scim.user.refused');
    expect(refused.map((r) => [r.target_id, r.detail?.reason])).to.deep.equal([[org.owner_user_id, 'privileged_identity']]);

    const browser = new TestBrowser();
    expect((await ssoLogin(browser, cp.url, org.org_slug)).status).to.equal(302);
    expect((await me(browser)).body.user_id).to.equal(admin.userId);
    const logins = await audit(org.org_id, 'sso.login');
    expect(logins.at(-1)).to.deep.include({ actor: `user:${admin.userId}`, target_id: admin.userId });
    expect(logins.at(-1)!.detail!.identity).to.deep.equal({ external_id: 'mallory-sub', email: 'mallory@example.test' });
    expect(logins.some((r) => r.target_id === org.owner_user_id)).to.equal(false);
  });

  it("an owner whose external id was set without the owner (by SCIM before this release, say) is not signed in by it: a 403 page, and the refusal names the IdP's login", async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    await store.db.query('UPDATE users SET external_id = $2 WHERE id = $1', [org.owner_user_id, 'eve-sub']);
    idp.signInAs({ sub: 'eve-sub', email: 'eve@example.test', email_verified: true });
    const browser = new TestBrowser();
    expectPage(await ssoLogin(browser, cp.url, org.org_slug), 403, /never confirmed by that account/);
    expect(browser.cookie(cp.url, SESSION_COOKIE)).to.equal(undefined);
    const refused = await audit(org.org_id, 'sso.login.refused');
    expect(refused).to.have.length(1);
    expect(refused[0]).to.deep.include({ actor: 'sso', target_id: org.owner_user_id });
    expect(refused[0]!.detail).to.deep.include({
      reason: 'unconfirmed_identity',
      role: 'owner',
      identity: { external_id: 'eve-sub', email: 'eve@example.test' },
    });
    expect(await audit(org.org_id, 'sso.login')).to.have.length(0);
  });

  it('the owner confirms the identity from a console session once; afterwards SSO alone signs them in', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    await store.db.query('UPDATE users SET external_id = $2 WHERE id = $1', [org.owner_user_id, 'owner-sub']);
    idp.signInAs({ sub: 'owner-sub', email: `owner@${org.org_slug}.test`, email_verified: true });
    expectPage(await ssoLogin(new TestBrowser(), cp.url, org.org_slug), 403, /sign in to the console another way first/);
    const signedIn = new TestBrowser();
    signedIn.setCookie(cp.url, SESSION_COOKIE, org.console_token);
    expect((await ssoLogin(signedIn, cp.url, org.org_slug)).status).to.equal(302);
    const fresh = new TestBrowser();
    expect((await ssoLogin(fresh, cp.url, org.org_slug)).status).to.equal(302);
    expect((await me(fresh)).body.user_id).to.equal(org.owner_user_id);
  });

  it("SCIM may still change a member's externalId and emails, and an admin's other attributes", async () => {
    const { org, admin } = await orgWithAdmin();
    const member = await seedUser(cp.deps, org.org_id, { user_name: 'bob@example.test', email: 'bob@example.test' });
    const settings = `${cp.url}/v1/orgs/${org.org_id}/scim`;
    await call(settings, { method: 'PUT', token: org.console_token, body: { enabled: true } });
    const token = (await call(`${settings}/token`, { method: 'POST', token: org.console_token })).body.token as string;
    const patch = (userId: string, path: string, value: unknown) =>
      call(`${cp.url}/v1/scim/v2/orgs/${org.org_id}/Users/${userId}`, {
        method: 'PATCH',
        token,
        headers: { 'content-type': 'application/scim+json' },
        body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path, value }] },
      });
    expect((await patch(member.userId, 'externalId', 'bob-sub')).status).to.equal(200);
    expect((await patch(member.userId, 'emails', [{ value: 'robert@example.test', primary: true }])).status).to.equal(200);
    expect((await patch(admin.userId, 'displayName', 'Mallory M.')).status).to.equal(200);
    const emails = await patch(admin.userId, 'emails', [{ value: 'other@example.test', primary: true }]);
    expect(emails.status).to.equal(400);
    expect(emails.body.detail).to.match(/admin of the organization; SCIM cannot change their emails/);
  });
});
