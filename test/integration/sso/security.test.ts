import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startTestIdp, type TestIdp } from '../../support/oidc-provider.js';
import { SESSION_COOKIE } from '../../../control-plane/http/auth.js';
import { sso_settings_upsert } from '../../../control-plane/stores/sso-settings.js';
import { createSecretSealer } from '../../../control-plane/services/sso/secrets.js';
import { clientSecretContext } from '../../../control-plane/services/sso/settings.js';
import { ssoLogin, TestBrowser } from './browser.js';
import { configureSso, expectPage, seedUser } from './helpers.js';

/** A loopback listener standing for the internal network: it counts what reaches it. */
async function startWitness(status = 200): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise((r) => server.close(() => r())) };
}

describeEachStore('sso security: no requests to private addresses (SSO_ALLOW_PRIVATE_ISSUERS off)', (store) => {
  let cp: TestControlPlane;
  let witness: Awaited<ReturnType<typeof startWitness>>;
  before(async () => {
    cp = await startTestControlPlane(store.db, { env: { SSO_ALLOW_PRIVATE_ISSUERS: 'false' } });
    witness = await startWitness();
  });
  after(async () => {
    await witness.close();
    await cp.close();
  });

  const put = (org: { org_id: string; console_token: string }, issuer: string) =>
    call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'PUT', token: org.console_token, body: { issuer, client_id: 'c', client_secret: 's' } });

  it('400 problem+json naming the issuer for http, loopback, private, link-local and unique-local issuers; nothing is fetched', async () => {
    const org = await seedOrg(cp.deps);
    const port = new URL(witness.url).port;
    for (const issuer of [
      witness.url,
      `https://127.0.0.1:${port}`,
      `https://localhost:${port}`,
      'https://169.254.169.254/latest',
      'https://10.0.0.8',
      'https://192.168.1.1',
      'https://[fd00::1]',
      'https://[::ffff:127.0.0.1]',
      'http://idp.example.com',
    ]) {
      const res = await put(org, issuer);
      expect(res.status, issuer).to.equal(400);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.body.detail, issuer).to.match(
        /^issuer: must (be an https URL|not name a loopback, private or link-local address).*SSO_ALLOW_PRIVATE_ISSUERS/,
      );
    }
    expect(witness.hits).to.deep.equal([]);
  });

  it('a private issuer already stored (saved while allowed, or a name that now resolves privately) is refused at connect time: 502 page, the listener sees nothing', async () => {
    const org = await seedOrg(cp.deps);
    const sealer = createSecretSealer(cp.deps.config);
    for (const issuer of [witness.url, witness.url.replace('http:', 'https:'), witness.url.replace('127.0.0.1', 'localhost')]) {
      await sso_settings_upsert(
        store.db,
        {
          org_id: org.org_id,
          issuer,
          client_id: 'c',
          client_secret_sealed: sealer.seal('s', clientSecretContext(org.org_id)),
          external_id_claim: 'sub',
        },
        new Date(),
      );
      const browser = new TestBrowser();
      expectPage(await browser.post(`${cp.url}/v1/auth/sso/${org.org_slug}/login`), 502, /could not load the openid configuration/i);
    }
    expect(witness.hits).to.deep.equal([]);
  });
});

describeEachStore('sso security: discovery failures are cached (SSO_ALLOW_PRIVATE_ISSUERS on)', (store) => {
  let cp: TestControlPlane;
  let witness: Awaited<ReturnType<typeof startWitness>>;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    witness = await startWitness(500);
  });
  after(async () => {
    await witness.close();
    await cp.close();
  });

  it('three sign-in starts against a failing issuer fetch its discovery document once', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, {
      method: 'PUT',
      token: org.console_token,
      body: { issuer: witness.url, client_id: 'c', client_secret: 's' },
    });
    expect(res.status).to.equal(200);
    for (let i = 0; i < 3; i++) {
      expectPage(await new TestBrowser().post(`${cp.url}/v1/auth/sso/${org.org_slug}/login`), 502, /could not load/i);
    }
    expect(witness.hits).to.deep.equal(['GET /.well-known/openid-configuration']);
  });
});

describeEachStore('sso security: no owner takeover by an admin, no login CSRF, no framing', (store) => {
  let cp: TestControlPlane;
  let idp: TestIdp;
  let evil: TestIdp;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    idp = await startTestIdp(`${cp.url}/v1/auth/sso/callback`);
    evil = await startTestIdp(`${cp.url}/v1/auth/sso/callback`);
  });
  after(async () => {
    await evil.close();
    await idp.close();
    await cp.close();
  });

  it("an admin's attempt to point SSO at their own IdP is a 403 naming why; the owner's settings stay", async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    const admin = await seedUser(cp.deps, org.org_id, { user_name: 'mallory@example.test', email: 'mallory@example.test', role: 'admin' });
    const res = await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, {
      method: 'PUT',
      token: admin.token,
      body: { issuer: evil.issuer, client_id: evil.clientId, client_secret: evil.clientSecret },
    });
    expect(res.status).to.equal(403);
    expect(res.headers.get('content-type')).to.include('application/problem+json');
    expect(res.body.detail).to.match(/owner role/);
    const [row] = await store.db.query<{ issuer: string }>('SELECT issuer FROM sso_settings WHERE org_id = $1', [org.org_id]);
    expect(row!.issuer).to.equal(idp.issuer);
  });

  it("an IdP claiming the owner's or an admin's email gets a 403 page, no session, and no external id is linked", async () => {
    // What the admin could do before: the IdP is theirs (here the owner set it up, standing in for that).
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, evil);
    await seedUser(cp.deps, org.org_id, { user_name: 'ada@example.test', email: 'ada@example.test', role: 'admin' });
    for (const email of [`owner@${org.org_slug}.test`, 'ada@example.test']) {
      evil.signInAs({ sub: `forged-${email}`, email, email_verified: true });
      const browser = new TestBrowser();
      expectPage(await ssoLogin(browser, cp.url, org.org_slug), 403, /not linked to a single sign-on identity by email alone/);
      expect(browser.cookie(cp.url, SESSION_COOKIE)).to.equal(undefined);
    }
    const linked = await store.db.query('SELECT 1 FROM users WHERE org_id = $1 AND external_id IS NOT NULL', [org.org_id]);
    expect(linked).to.have.length(0);
  });

  it('GET on the sign-in link only shows a page with a button (framing forbidden); nothing is started', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    const page = await new TestBrowser().get(`${cp.url}/v1/auth/sso/${org.org_slug}/login`);
    expect(page.status).to.equal(200);
    expect(page.text).to.match(/<form method="post" action="\/v1\/auth\/sso\/[^"]+\/login"><button/);
    expect(page.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(page.headers.getSetCookie()).to.deep.equal([]);
    expect(await store.db.query('SELECT 1 FROM sso_login_states WHERE org_id = $1', [org.org_id])).to.have.length(0);
  });

  it('a POST from another site, or with no Origin, is a 403 page and starts nothing', async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    const login = `${cp.url}/v1/auth/sso/${org.org_slug}/login`;
    for (const origin of ['https://attacker.example', `http://localhost:1`, null]) {
      const hop = await new TestBrowser().post(login, origin);
      expectPage(hop, 403, /not started from this site/);
      expect(hop.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    }
    expect(await store.db.query('SELECT 1 FROM sso_login_states WHERE org_id = $1', [org.org_id])).to.have.length(0);
    expect((await new TestBrowser().post(login)).status).to.equal(303);
  });

  it('a browser signed in to another organization is told that continuing signs it out of that one', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    const browser = new TestBrowser();
    browser.setCookie(cp.url, SESSION_COOKIE, other.console_token);
    const page = await browser.get(`${cp.url}/v1/auth/sso/${org.org_slug}/login`);
    expect(page.text).to.include('signed in to another organization');
    const same = new TestBrowser();
    same.setCookie(cp.url, SESSION_COOKIE, org.console_token);
    expect((await same.get(`${cp.url}/v1/auth/sso/${org.org_slug}/login`)).text).not.to.include('another organization');
  });

  it("the IdP's error description is logged, not shown", async () => {
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    const page = await new TestBrowser().get(
      `${cp.url}/v1/auth/sso/callback?state=x&error=access_denied&error_description=${encodeURIComponent('Call +1-555-0100 to restore access')}`,
    );
    expectPage(page, 403, /refused the sign-in \(access_denied\)/);
    expect(page.text).not.to.include('555');
    const odd = await new TestBrowser().get(`${cp.url}/v1/auth/sso/callback?state=x&error=${encodeURIComponent('<b>visit evil.example</b>')}`);
    expectPage(odd, 403, /an unrecognized error/);
    expect(odd.text).not.to.include('evil.example');
  });
});
