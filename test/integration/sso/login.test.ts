import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startTestIdp, type TestIdp } from '../../support/oidc-provider.js';
import { SESSION_COOKIE } from '../../../control-plane/http/auth.js';
import { membership_set_status } from '../../../control-plane/stores/memberships.js';
import { ssoLogin, TestBrowser, walkToCallback } from './browser.js';
import { configureSso, expectPage, seedUser } from './helpers.js';
import { patchBody, seedScimOrg, userBody } from '../../support/scim.js';

interface UserRow {
  id: string;
  user_name: string;
  external_id: string | null;
  given_name: string | null;
  family_name: string | null;
  emails: { value: string }[];
  source: string;
  active: boolean;
  role: string;
  status: string;
}

describeEachStore('sso: just-in-time login without SCIM', (store) => {
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

  async function ssoOrg(extra: { external_id_claim?: string } = {}) {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp, extra);
    return org;
  }

  const usersOf = (orgId: string) =>
    store.db.query<UserRow>(
      `SELECT u.id, u.user_name, u.external_id, u.given_name, u.family_name, u.emails, u.source, u.active, m.role, m.status
         FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.org_id = $1 ORDER BY u.created_at`,
      [orgId],
    );

  const me = (browser: TestBrowser) =>
    call(`${cp.url}/v1/me`, { headers: { cookie: `${SESSION_COOKIE}=${browser.cookie(cp.url, SESSION_COOKIE)}` } });

  it('303 to the IdP with response_type code, PKCE S256, state, nonce, openid email profile and the registered redirect_uri', async () => {
    const org = await ssoOrg();
    const start = await new TestBrowser().post(`${cp.url}/v1/auth/sso/${org.org_slug}/login`);
    expect(start.status).to.equal(303);
    const url = new URL(start.location!);
    expect(url.origin).to.equal(idp.issuer);
    const p = url.searchParams;
    expect(p.get('response_type')).to.equal('code');
    expect(p.get('client_id')).to.equal(idp.clientId);
    expect(p.get('redirect_uri')).to.equal(`${cp.url}/v1/auth/sso/callback`);
    expect(p.get('scope')).to.equal('openid email profile');
    expect(p.get('code_challenge_method')).to.equal('S256');
    expect(p.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get('state')).to.have.length.greaterThan(20);
    expect(p.get('nonce')).to.have.length.greaterThan(20);
    expect(start.headers.getSetCookie().join('\n')).to.match(/tollgate_sso_login=[^;]+;.*httponly/i);
  });

  it('first login creates an active member (source sso, userName = email, external id = sub) and the session cookie works on /v1/me', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'alice-sub', email: 'alice@example.test', email_verified: true, given_name: 'Alice', family_name: 'Liddell' });
    const browser = new TestBrowser();
    const done = await ssoLogin(browser, cp.url, org.org_slug);

    expect(done.status).to.equal(302);
    expect(done.location).to.equal(`${cp.url}/`);
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(cookie)
      .to.match(/httponly/i)
      .and.match(/samesite=lax/i)
      .and.match(/path=\//i)
      .and.match(/expires=/i);
    expect(cookie).not.to.match(/;\s*secure/i);

    const users = await usersOf(org.org_id);
    const alice = users.find((u) => u.external_id === 'alice-sub')!;
    expect(alice).to.include({
      user_name: 'alice@example.test',
      given_name: 'Alice',
      family_name: 'Liddell',
      source: 'sso',
      active: true,
      role: 'member',
      status: 'active',
    });
    expect(alice.emails.map((e) => e.value)).to.deep.equal(['alice@example.test']);

    const res = await me(browser);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ user_id: alice.id, email: 'alice@example.test', memberships: [{ org_id: org.org_id, role: 'member' }] });
  });

  it('a second login finds the same user and opens a new session', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'bob-sub', email: 'bob@example.test' });
    const first = new TestBrowser();
    await ssoLogin(first, cp.url, org.org_slug);
    const second = new TestBrowser();
    expect((await ssoLogin(second, cp.url, org.org_slug)).status).to.equal(302);

    expect((await usersOf(org.org_id)).filter((u) => u.source === 'sso')).to.have.length(1);
    expect(second.cookie(cp.url, SESSION_COOKIE)).to.be.a('string').and.not.equal(first.cookie(cp.url, SESSION_COOKIE));
    expect((await me(first)).body.user_id).to.equal((await me(second)).body.user_id);
  });

  it('writes audit rows for the JIT creation and each login, actor user:<id>, with no token in them', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'carl-sub', email: 'carl@example.test' });
    const browser = new TestBrowser();
    await ssoLogin(browser, cp.url, org.org_slug);
    await ssoLogin(browser, cp.url, org.org_slug);
    const user = (await usersOf(org.org_id)).find((u) => u.external_id === 'carl-sub')!;
    const rows = await store.db.query<{ actor: string; action: string; target_id: string; detail: unknown }>(
      `SELECT actor, action, target_id, detail FROM audit_log WHERE org_id = $1 AND action LIKE 'sso.%' AND action NOT LIKE 'sso.settings%' ORDER BY id`,
      [org.org_id],
    );
    expect(rows.map((r) => r.action)).to.deep.equal(['sso.user_jit_create', 'sso.login', 'sso.login']);
    for (const r of rows) expect(r).to.include({ actor: `user:${user.id}`, target_id: user.id });
    const token = browser.cookie(cp.url, SESSION_COOKIE)!;
    expect(JSON.stringify(rows)).not.to.include(token).and.not.include(token.slice(4));
  });

  it('the bootstrap owner is not matched by email alone (403 page), but links from a browser signed in as the owner, and keeps the owner role', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'owner-sub', email: `owner@${org.org_slug}.test` });
    expectPage(
      await ssoLogin(new TestBrowser(), cp.url, org.org_slug),
      403,
      /is an owner of .* not linked to a single sign-on identity by email alone/,
    );
    const browser = new TestBrowser();
    browser.setCookie(cp.url, SESSION_COOKIE, org.console_token);
    expect((await ssoLogin(browser, cp.url, org.org_slug)).status).to.equal(302);
    // Linked: the next login from a fresh browser finds the owner by external id.
    expect((await ssoLogin(new TestBrowser(), cp.url, org.org_slug)).status).to.equal(302);
    const res = await me(browser);
    expect(res.body.user_id).to.equal(org.owner_user_id);
    expect(res.body.memberships).to.deep.equal([{ org_id: org.org_id, role: 'owner' }]);
    expect(await usersOf(org.org_id)).to.have.length(1);
  });

  it('external_id_claim names the claim users are matched by', async () => {
    const org = await ssoOrg({ external_id_claim: 'employee_id' });
    idp.signInAs({ sub: 'dora-sub', email: 'dora@example.test', employee_id: 'E-1042' });
    const browser = new TestBrowser();
    await ssoLogin(browser, cp.url, org.org_slug);
    const dora = (await usersOf(org.org_id)).find((u) => u.source === 'sso')!;
    expect(dora.external_id).to.equal('E-1042');

    // A new email at the IdP still lands on the same user: the external id is what matches.
    idp.signInAs({ sub: 'dora-sub', email: 'dora.renamed@example.test', employee_id: 'E-1042' });
    const again = new TestBrowser();
    await ssoLogin(again, cp.url, org.org_slug);
    expect((await me(again)).body.user_id).to.equal(dora.id);
  });

  it('an identity without an email is created with the external id as its userName', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'no-mail-sub' });
    await ssoLogin(new TestBrowser(), cp.url, org.org_slug);
    const user = (await usersOf(org.org_id)).find((u) => u.source === 'sso')!;
    expect(user).to.include({ user_name: 'no-mail-sub', external_id: 'no-mail-sub' });
    expect(user.emails).to.deep.equal([]);
  });

  it('403 page when another identity presents the email of an existing JIT user', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'erin-sub', email: 'erin@example.test' });
    await ssoLogin(new TestBrowser(), cp.url, org.org_slug);
    idp.signInAs({ sub: 'impostor-sub', email: 'erin@example.test' });
    const browser = new TestBrowser();
    expectPage(await ssoLogin(browser, cp.url, org.org_slug), 403, /different identity/);
    expect(browser.cookie(cp.url, SESSION_COOKIE)).to.equal(undefined);
  });

  it('an email the IdP marks unverified is not used to match the bootstrap owner', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'mallory-sub', email: `owner@${org.org_slug}.test`, email_verified: false });
    const browser = new TestBrowser();
    await ssoLogin(browser, cp.url, org.org_slug);
    const res = await me(browser);
    expect(res.body.user_id).not.to.equal(org.owner_user_id);
    expect(res.body.memberships).to.deep.equal([{ org_id: org.org_id, role: 'member' }]);
  });

  it('403 page when the membership is inactive (deprovisioned), and no session is opened', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'fred-sub', email: 'fred@example.test' });
    await ssoLogin(new TestBrowser(), cp.url, org.org_slug);
    const fred = (await usersOf(org.org_id)).find((u) => u.external_id === 'fred-sub')!;
    await membership_set_status(store.db, org.org_id, fred.id, 'inactive', new Date());
    const sessionsBefore = await store.db.query('SELECT id FROM console_sessions WHERE user_id = $1', [fred.id]);

    const browser = new TestBrowser();
    expectPage(await ssoLogin(browser, cp.url, org.org_slug), 403, /deactivated/);
    expect(browser.cookie(cp.url, SESSION_COOKIE)).to.equal(undefined);
    expect(await store.db.query('SELECT id FROM console_sessions WHERE user_id = $1', [fred.id])).to.have.length(sessionsBefore.length);
  });

  it('403 page when the user is inactive, even without SCIM', async () => {
    const org = await ssoOrg();
    await seedUser(cp.deps, org.org_id, { user_name: 'gina@example.test', external_id: 'gina-sub', source: 'sso', active: false });
    idp.signInAs({ sub: 'gina-sub', email: 'gina@example.test' });
    expectPage(await ssoLogin(new TestBrowser(), cp.url, org.org_slug), 403, /deactivated/);
  });

  it('403 page on a replayed callback: the state is single use', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'hank-sub', email: 'hank@example.test' });
    const browser = new TestBrowser();
    const run = await walkToCallback(browser, cp.url, org.org_slug);
    const loginCookie = browser.cookie(cp.url, 'tollgate_sso_login');
    expect((await browser.get(run.callbackUrl!)).status).to.equal(302);

    // The replay carries the original login cookie too: only the used state stops it.
    const replay = await fetch(run.callbackUrl!, { redirect: 'manual', headers: { cookie: `tollgate_sso_login=${loginCookie}` } });
    expectPage(
      { url: run.callbackUrl!, status: replay.status, location: undefined, headers: replay.headers, text: await replay.text() },
      403,
      /already used/,
    );
    expect(replay.headers.getSetCookie().join()).not.to.include(`${SESSION_COOKIE}=tgs_`);
  });

  it('logins started in two tabs of one browser both complete', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'tabs-sub', email: 'tabs@example.test' });
    const browser = new TestBrowser();
    const first = await walkToCallback(browser, cp.url, org.org_slug);
    const second = await walkToCallback(browser, cp.url, org.org_slug);
    expect(first.callbackUrl).not.to.equal(second.callbackUrl);
    expect((await browser.get(first.callbackUrl!)).status).to.equal(302);
    expect((await browser.get(second.callbackUrl!)).status).to.equal(302);
  });

  it('405 to HEAD on the callback, which leaves the pending login usable', async () => {
    const org = await ssoOrg();
    idp.signInAs({ sub: 'head-sub', email: 'head@example.test' });
    const browser = new TestBrowser();
    const run = await walkToCallback(browser, cp.url, org.org_slug);
    expect((await fetch(run.callbackUrl!, { method: 'HEAD', redirect: 'manual' })).status).to.equal(405);
    // HEAD on the sign-in link only shows its page: nothing is started.
    const pending = await store.db.query('SELECT 1 FROM sso_login_states WHERE org_id = $1', [org.org_id]);
    expect((await fetch(`${cp.url}/v1/auth/sso/${org.org_slug}/login`, { method: 'HEAD', redirect: 'manual' })).status).to.equal(200);
    expect(await store.db.query('SELECT 1 FROM sso_login_states WHERE org_id = $1', [org.org_id])).to.have.length(pending.length);
    expect((await browser.get(run.callbackUrl!)).status).to.equal(302);
  });

  it('403 page for an unknown state, and for a callback in a browser that did not start the login', async () => {
    const org = await ssoOrg();
    expectPage(
      await new TestBrowser().get(`${cp.url}/v1/auth/sso/callback?code=abc&state=never-issued`),
      403,
      /unknown, has expired or was already used/,
    );

    idp.signInAs({ sub: 'ivy-sub', email: 'ivy@example.test' });
    const run = await walkToCallback(new TestBrowser(), cp.url, org.org_slug);
    expectPage(await new TestBrowser().get(run.callbackUrl!), 403, /different browser/);
  });

  it('403 page when the IdP refuses (access_denied) or sends no code', async () => {
    const org = await ssoOrg();
    idp.next.deny = true;
    const browser = new TestBrowser();
    const run = await walkToCallback(browser, cp.url, org.org_slug);
    expect(new URL(run.callbackUrl!).searchParams.get('error')).to.equal('access_denied');
    expectPage(await browser.get(run.callbackUrl!), 403, /refused the sign-in \(access_denied/);

    idp.signInAs({ sub: 'jack-sub', email: 'jack@example.test' });
    const other = new TestBrowser();
    const ok = await walkToCallback(other, cp.url, org.org_slug);
    const noCode = new URL(ok.callbackUrl!);
    noCode.searchParams.delete('code');
    expectPage(await other.get(noCode.href), 403, /no authorization code/);
    expectPage(await new TestBrowser().get(`${cp.url}/v1/auth/sso/callback`), 403, /no state/);
  });

  it('403 page naming invalid_client when the token endpoint rejects the configured client secret', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp, { client_secret: 'not-the-secret' });
    idp.signInAs({ sub: 'kim-sub', email: 'kim@example.test' });
    expectPage(await ssoLogin(new TestBrowser(), cp.url, org.org_slug), 403, /invalid_client/);
  });

  it('502 page when the identity provider cannot be reached', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp, { issuer: 'http://127.0.0.1:9' });
    expectPage(await new TestBrowser().post(`${cp.url}/v1/auth/sso/${org.org_slug}/login`), 502, /could not load the openid configuration/i);
  });

  it('the same 404 page for an unknown org slug as for an org without SSO, never naming the org', async () => {
    const unknown = await new TestBrowser().get(`${cp.url}/v1/auth/sso/no-such-org/login`);
    expectPage(unknown, 404, /not available at &#34;no-such-org&#34;/);
    const org = await seedOrg(cp.deps);
    const withoutSso = await new TestBrowser().get(`${cp.url}/v1/auth/sso/${org.org_slug}/login`);
    expectPage(withoutSso, 404, /not available/);
    expect(withoutSso.text).not.to.include(`Org ${org.org_slug}`);
    expect(withoutSso.text.replaceAll(org.org_slug, 'no-such-org')).to.equal(unknown.text);
  });
});

describeEachStore('sso: client authentication at the token endpoint', (store) => {
  let cp: TestControlPlane;
  let idp: TestIdp;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    idp = await startTestIdp(`${cp.url}/v1/auth/sso/callback`, { tokenEndpointAuthMethod: 'client_secret_post' });
  });
  after(async () => {
    await idp.close();
    await cp.close();
  });

  it('signs in at an IdP whose client only accepts client_secret_post (falls back from Basic)', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    for (const sub of ['post-1', 'post-2']) {
      idp.signInAs({ sub, email: `${sub}@example.test` });
      const browser = new TestBrowser();
      expect((await ssoLogin(browser, cp.url, org.org_slug)).status).to.equal(302);
      expect((await call(`${cp.url}/v1/me`, { headers: { cookie: `${SESSION_COOKIE}=${browser.cookie(cp.url, SESSION_COOKIE)}` } })).status).to.equal(
        200,
      );
    }
  });

  it('403 page naming invalid_client when neither Basic nor the form body is accepted', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp, { client_secret: 'wrong' });
    idp.signInAs({ sub: 'post-3', email: 'post-3@example.test' });
    expectPage(await ssoLogin(new TestBrowser(), cp.url, org.org_slug), 403, /invalid_client/);
  });
});

describeEachStore('sso: login behind a TLS-terminating proxy', (store) => {
  const PUBLIC = 'https://tollgate.example.test';
  let cp: TestControlPlane;
  let idp: TestIdp;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    cp.deps.config.publicBaseUrl = PUBLIC;
    idp = await startTestIdp(`${PUBLIC}/v1/auth/sso/callback`);
  });
  after(async () => {
    await idp.close();
    await cp.close();
  });

  it('PUBLIC_BASE_URL https: the redirect_uri is the public one and the login and session cookies are Secure', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    idp.signInAs({ sub: 'tls-sub', email: 'tls@example.test' });
    const browser = new TestBrowser();
    // The browser is at the public URL: its Origin is that one, not the loopback address the test dials.
    const start = await browser.post(`${cp.url}/v1/auth/sso/${org.org_slug}/login`, PUBLIC);
    expect(new URL(start.location!).searchParams.get('redirect_uri')).to.equal(`${PUBLIC}/v1/auth/sso/callback`);
    expect(start.headers.getSetCookie().join('\n')).to.match(/tollgate_sso_login=[^;]+;.*secure/i);

    let hop = start;
    while (hop.location && !hop.location.startsWith(PUBLIC)) hop = await browser.get(hop.location);
    // The proxy in front would forward the public URL to this server unchanged but for the origin.
    const done = await browser.get(hop.location!.replace(PUBLIC, cp.url));
    expect(done.status, done.text.slice(0, 300)).to.equal(302);
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(cookie)
      .to.match(/;\s*secure/i)
      .and.match(/httponly/i)
      .and.match(/samesite=lax/i);
  });
});

describeEachStore('sso: pending login expiry', (store) => {
  let now = new Date();
  let cp: TestControlPlane;
  let idp: TestIdp;
  before(async () => {
    cp = await startTestControlPlane(store.db, { clock: { now: () => now } });
    idp = await startTestIdp(`${cp.url}/v1/auth/sso/callback`);
  });
  after(async () => {
    await idp.close();
    await cp.close();
  });

  it('403 page when the person comes back after the 10-minute login window; 302 just inside it', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    idp.signInAs({ sub: 'slow-sub', email: 'slow@example.test' });

    now = new Date();
    const late = new TestBrowser();
    const lateRun = await walkToCallback(late, cp.url, org.org_slug);
    now = new Date(now.getTime() + 10 * 60_000 + 1000);
    expectPage(await late.get(lateRun.callbackUrl!), 403, /has expired/);

    now = new Date();
    const inTime = new TestBrowser();
    const run = await walkToCallback(inTime, cp.url, org.org_slug);
    now = new Date(now.getTime() + 9 * 60_000);
    expect((await inTime.get(run.callbackUrl!)).status).to.equal(302);
  });
});

describeEachStore('sso: login with SCIM provisioning', (store) => {
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

  async function scimOrg() {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    await store.db.query('UPDATE orgs SET scim_enabled = true WHERE id = $1', [org.org_id]);
    return org;
  }

  const me = (browser: TestBrowser) =>
    call(`${cp.url}/v1/me`, { headers: { cookie: `${SESSION_COOKIE}=${browser.cookie(cp.url, SESSION_COOKIE)}` } });
  const userCount = async (orgId: string) =>
    (await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE org_id = $1', [orgId]))[0]!.n;

  it('resolves to the provisioned user whose externalId equals the sub claim', async () => {
    const org = await scimOrg();
    const provisioned = await seedUser(cp.deps, org.org_id, { user_name: 'lena.scim', external_id: 'lena-sub', email: 'lena@corp.test' });
    idp.signInAs({ sub: 'lena-sub', email: 'lena.other@example.test' });
    const browser = new TestBrowser();
    expect((await ssoLogin(browser, cp.url, org.org_slug)).status).to.equal(302);
    expect((await me(browser)).body.user_id).to.equal(provisioned.userId);
    expect(await userCount(org.org_id)).to.equal(2);
    const [row] = await store.db.query<{ source: string; user_name: string }>('SELECT source, user_name FROM users WHERE id = $1', [
      provisioned.userId,
    ]);
    expect(row).to.deep.equal({ source: 'scim', user_name: 'lena.scim' });
  });

  it('falls back to userName = email when no externalId matches', async () => {
    const org = await scimOrg();
    const provisioned = await seedUser(cp.deps, org.org_id, { user_name: 'max@corp.test', external_id: 'entra-object-id', email: 'max@corp.test' });
    idp.signInAs({ sub: 'pairwise-sub', email: 'MAX@corp.test' });
    const browser = new TestBrowser();
    await ssoLogin(browser, cp.url, org.org_slug);
    expect((await me(browser)).body.user_id).to.equal(provisioned.userId);
    expect(await userCount(org.org_id)).to.equal(2);
  });

  it('403 page for an identity SCIM has not provisioned, and no user is created', async () => {
    const org = await scimOrg();
    idp.signInAs({ sub: 'nina-sub', email: 'nina@corp.test' });
    const browser = new TestBrowser();
    expectPage(await ssoLogin(browser, cp.url, org.org_slug), 403, /has not provisioned you/);
    expect(browser.cookie(cp.url, SESSION_COOKIE)).to.equal(undefined);
    expect(await userCount(org.org_id)).to.equal(1);
  });

  it('end to end with the SCIM API: provisioned → signs in; PATCH active=false → session and new logins refused; reactivated → signs in again', async () => {
    const s = await seedScimOrg(cp);
    await configureSso(cp, s.org, idp);
    const created = await s.scim('POST', '/Users', userBody('pia@corp.test', { externalId: 'pia-sub' }));
    expect(created.status).to.equal(201);
    idp.signInAs({ sub: 'pia-sub', email: 'pia@corp.test' });

    const browser = new TestBrowser();
    await ssoLogin(browser, cp.url, s.org.org_slug);
    expect((await me(browser)).body.user_id).to.equal(created.body.id);

    expect((await s.scim('PATCH', `/Users/${created.body.id}`, patchBody({ op: 'replace', path: 'active', value: false }))).status).to.equal(200);
    expect((await me(browser)).status).to.equal(401);
    expectPage(await ssoLogin(new TestBrowser(), cp.url, s.org.org_slug), 403, /deactivated/);

    expect((await s.scim('PATCH', `/Users/${created.body.id}`, patchBody({ op: 'replace', path: 'active', value: true }))).status).to.equal(200);
    const back = new TestBrowser();
    expect((await ssoLogin(back, cp.url, s.org.org_slug)).status).to.equal(302);
    expect((await me(back)).body.user_id).to.equal(created.body.id);
  });

  it('403 page for a deprovisioned user (membership inactive)', async () => {
    const org = await scimOrg();
    await seedUser(cp.deps, org.org_id, { user_name: 'otto@corp.test', external_id: 'otto-sub', status: 'inactive', active: false });
    idp.signInAs({ sub: 'otto-sub', email: 'otto@corp.test' });
    expectPage(await ssoLogin(new TestBrowser(), cp.url, org.org_slug), 403, /deactivated/);
  });
});
