import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

/** Security finding 11: nothing was rate-limited on the unauthenticated side. */
describeEachStore('unauthenticated sign-in routes are rate-limited', (store) => {
  const exchange = (cp: TestControlPlane, token: string) =>
    fetch(`${cp.url}/v1/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  // A login starts with the same-origin POST of the sign-in page's button.
  const ssoStart = (cp: TestControlPlane, slug: string) =>
    fetch(`${cp.url}/v1/auth/sso/${slug}/login`, { method: 'POST', redirect: 'manual', headers: { origin: new URL(cp.url).origin } });

  async function expect429(res: Response): Promise<void> {
    expect(res.status).to.equal(429);
    expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
    expect(((await res.json()) as { detail: string }).detail).to.match(/Too many sign-in attempts/);
  }

  describe('per client address', () => {
    let cp: TestControlPlane;
    before(async () => {
      cp = await startTestControlPlane(store.db, { env: { AUTH_RATE_LIMIT_PER_IP_PER_MINUTE: '3' } });
    });
    after(() => cp.close());

    it('session exchanges past the limit answer 429 problem+json with retry-after, valid token or not', async () => {
      const org = await seedOrg(cp.deps);
      expect((await exchange(cp, org.console_token)).status).to.equal(204);
      expect((await exchange(cp, 'tgs_wrong')).status).to.equal(401);
      expect((await exchange(cp, 'tgs_wrong')).status).to.equal(401);
      await expect429(await exchange(cp, org.console_token));
    });

    it('SSO login starts past the limit answer 429 whatever the slug', async () => {
      for (let i = 0; i < 3; i++) expect((await ssoStart(cp, `nobody-${i}`)).status).to.equal(404);
      await expect429(await ssoStart(cp, 'nobody-else'));
    });
  });

  describe('per organization', () => {
    let cp: TestControlPlane;
    before(async () => {
      cp = await startTestControlPlane(store.db, { env: { AUTH_RATE_LIMIT_PER_ORG_PER_MINUTE: '2' } });
    });
    after(() => cp.close());

    it("SSO login starts for one org past its limit answer 429; another org's still start", async () => {
      for (let i = 0; i < 2; i++) expect((await ssoStart(cp, 'acme')).status).to.equal(404);
      await expect429(await ssoStart(cp, 'ACME'));
      expect((await ssoStart(cp, 'globex')).status).to.equal(404);
    });
  });
});
