import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startTestIdp, type TestIdp } from '../../support/oidc-provider.js';
import { seedSigninOrg, signinClient } from '../../support/gateway-signin.js';
import { TestBrowser, type Hop } from '../sso/browser.js';
import { configureSso } from '../sso/helpers.js';

describeEachStore('gateway sign-in: the code page signs in through the org SSO (real OIDC provider)', (store) => {
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

  it('a browser with no session: code page → org SSO → back to the code page → confirm; Claude Code then gets tokens for that user', async () => {
    const { org } = await seedSigninOrg(cp);
    await configureSso(cp, org, idp);
    idp.signInAs({ sub: `dev-${Date.now()}`, email: 'dev@example.test', email_verified: true });
    const client = signinClient(cp);
    const started = await client.start();
    const browser = new TestBrowser();

    const page = await browser.get(started.body.verification_uri_complete);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(started.body.user_code).and.include('name="org_slug"');

    let hop: Hop = await browser.post(`${cp.url}/oauth/device/sso`, cp.url, { org_slug: org.org_slug, user_code: started.body.user_code });
    expect(hop.status, hop.text).to.equal(303);
    for (let i = 0; i < 10 && hop.location && !hop.location.startsWith(`${cp.url}/oauth/device`); i++) hop = await browser.get(hop.location);
    expect(hop.location).to.equal(`${cp.url}/oauth/device?user_code=${started.body.user_code}`);

    const signedIn = await browser.get(hop.location!);
    expect(signedIn.text).to.include('dev@example.test').and.include('Connect Claude Code');
    const confirmed = await browser.post(`${cp.url}/oauth/device`, cp.url, { user_code: started.body.user_code, decision: 'approve' });
    expect(confirmed.status, confirmed.text).to.equal(200);

    // Polled at once: a grant confirmed before its first poll has no interval to wait out.
    const tokens = await client.poll(started.body.device_code);
    expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
    expect(tokens.body.email).to.equal('dev@example.test');
  });
});
