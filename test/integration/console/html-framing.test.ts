import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startTestIdp, type TestIdp } from '../../support/oidc-provider.js';
import { configureSso } from '../sso/helpers.js';

/**
 * Every HTML page the control plane serves forbids framing (issue 31,
 * finding 13: the SSO pages lacked frame-ancestors): the web console and its
 * 404, and each SSO page — the sign-in button, a refusal, a failed callback,
 * an organization without SSO. A page in another site's frame could dress a
 * click on it up as something else.
 */
describeEachStore('control plane: no HTML page may be framed', (store) => {
  let cp: TestControlPlane;
  let idp: TestIdp;
  let slug: string;
  let bare: string;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    idp = await startTestIdp(`${cp.url}/v1/auth/sso/callback`);
    const org = await seedOrg(cp.deps);
    await configureSso(cp, org, idp);
    slug = org.org_slug;
    bare = (await seedOrg(cp.deps)).org_slug;
  });
  after(async () => {
    await cp.close();
    await idp.close();
  });

  const pages: [what: string, path: string, method?: string][] = [
    ['the console', '/'],
    ['a console page', '/index.html'],
    ['the console 404', '/no/such/page'],
    ['the SSO sign-in button', '/v1/auth/sso/{slug}/login'],
    ['a sign-in POST from nowhere (refused)', '/v1/auth/sso/{slug}/login', 'POST'],
    ['an organization without SSO', '/v1/auth/sso/{bare}/login'],
    ['an unknown organization', '/v1/auth/sso/no-such-org/login'],
    ['a callback with no sign-in behind it', '/v1/auth/sso/callback?state=nothing&code=nothing'],
    ['a callback with an error from the identity provider', '/v1/auth/sso/callback?state=nothing&error=access_denied'],
  ];

  for (const [what, path, method] of pages) {
    it(`${what}: HTML with frame-ancestors 'none' and X-Frame-Options DENY`, async () => {
      const res = await fetch(`${cp.url}${path.replace('{slug}', slug).replace('{bare}', bare)}`, { method: method ?? 'GET', redirect: 'manual' });
      await res.text();
      expect(res.headers.get('content-type'), `${res.status}`).to.match(/^text\/html/);
      expect(res.headers.get('content-security-policy')).to.match(/frame-ancestors 'none'/);
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
    });
  }
});
