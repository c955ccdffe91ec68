import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

describeEachStore('console: /v1/me and logout', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('200: answers who the bootstrap owner is', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${cp.url}/v1/me`, { token: org.console_token });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      user_id: org.owner_user_id,
      email: `owner@${org.org_slug}.test`,
      memberships: [{ org_id: org.org_id, role: 'owner' }],
    });
  });

  it('401 problem+json without a token, with a malformed one, and with an unknown one', async () => {
    for (const token of [undefined, 'nope', 'tgs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await call(`${cp.url}/v1/me`, { token });
      expect(res.status).to.equal(401);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.headers.get('www-authenticate')).to.equal('Bearer');
      expect(res.body).to.include({ status: 401, title: 'Unauthorized' });
    }
  });

  it('the bootstrap answer says when its token expires; past that, the 401 says it expired and what to run', async () => {
    let offsetMs = 0;
    const later = await startTestControlPlane(store.db, { clock: { now: () => new Date(Date.now() + offsetMs) } });
    try {
      const org = await seedOrg(later.deps);
      const expiresAt = new Date(org.expires_at).getTime();
      expect(expiresAt - Date.now()).to.be.within(12 * 3600_000 - 60_000, 12 * 3600_000);
      expect((await call(`${later.url}/v1/me`, { token: org.console_token })).status).to.equal(200);
      offsetMs = expiresAt - Date.now() + 1000;
      const res = await call(`${later.url}/v1/me`, { token: org.console_token });
      expect(res.status).to.equal(401);
      expect(res.body.detail).to.equal(
        `This console token expired at ${org.expires_at}. Issue a new one with: npm run -s cli -- console-token --org ${org.org_slug} --owner <your email>`,
      );
    } finally {
      await later.close();
    }
  });

  it('204 on logout, then the token is refused', async () => {
    const org = await seedOrg(cp.deps);
    expect((await call(`${cp.url}/v1/auth/logout`, { method: 'POST', token: org.console_token })).status).to.equal(204);
    expect((await call(`${cp.url}/v1/me`, { token: org.console_token })).status).to.equal(401);
  });

  it('404 problem+json for an unknown route', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${cp.url}/v1/nothing-here`, { token: org.console_token });
    expect(res.status).to.equal(404);
    expect(res.headers.get('content-type')).to.include('application/problem+json');
  });

  it('stores the console token only as a SHA-256 hash', async () => {
    const org = await seedOrg(cp.deps);
    const rows = await store.db.query<{ token_hash: string }>('SELECT token_hash FROM console_sessions');
    expect(rows.map((r) => r.token_hash)).not.to.include(org.console_token);
    expect(JSON.stringify(rows)).not.to.include(org.console_token.slice(4));
  });
});

describeEachStore('console: wrong method', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('405 problem+json with Allow when a route exists for other methods', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${cp.url}/v1/workspaces/${org.workspace_id}/credits`, { token: org.console_token });
    expect(res.status).to.equal(405);
    expect(res.headers.get('content-type')).to.include('application/problem+json');
    expect(res.headers.get('allow')).to.include('POST');
    expect(res.body).to.include({ status: 405, title: 'Method Not Allowed' });
  });
});
