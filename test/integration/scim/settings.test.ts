import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { seedScimOrg, userBody } from '../../support/scim.js';
import { openSession } from '../../../control-plane/services/auth/sessions.js';
import { audit_list } from '../../../control-plane/stores/audit.js';

describeEachStore('console: Settings → SCIM', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  const settingsUrl = (orgId: string) => `${cp.url}/v1/orgs/${orgId}/scim`;

  it('200: a new org has SCIM disabled, no token, and the base URL to copy', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(settingsUrl(org.org_id), { token: org.console_token });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ enabled: false, base_url: `${cp.url}/v1/scim/v2/orgs/${org.org_id}`, token: null });
  });

  it('PUT {enabled} answers the settings and is audited', async () => {
    const org = await seedOrg(cp.deps);
    const on = await call(settingsUrl(org.org_id), { method: 'PUT', token: org.console_token, body: { enabled: true } });
    expect(on.status).to.equal(200);
    expect(on.body).to.include({ enabled: true, token: null });
    const off = await call(settingsUrl(org.org_id), { method: 'PUT', token: org.console_token, body: { enabled: false } });
    expect(off.body.enabled).to.equal(false);
    const actions = (await audit_list(store.db, org.org_id)).map((a) => a.action);
    expect(actions).to.include.members(['scim.enable', 'scim.disable']);
  });

  it('400 problem+json for a body that is not {enabled: boolean}', async () => {
    const org = await seedOrg(cp.deps);
    for (const body of [{ enabled: 'yes' }, {}, { enabled: true, extra: 1 }, '[1]', 'not json']) {
      const res = await call(settingsUrl(org.org_id), { method: 'PUT', token: org.console_token, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
    }
  });

  it('201: the token is shown once, with its prefix; GET shows only prefix and created_at', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${settingsUrl(org.org_id)}/token`, { method: 'POST', token: org.console_token });
    expect(res.status).to.equal(201);
    expect(res.body.token).to.match(/^tgp_[0-9A-Za-z]{36}$/);
    expect(res.body.token.startsWith(res.body.prefix)).to.equal(true);
    expect(Date.parse(res.body.created_at)).to.be.a('number').and.not.NaN;
    const shown = await call(settingsUrl(org.org_id), { token: org.console_token });
    expect(shown.body.token).to.deep.equal({ prefix: res.body.prefix, created_at: res.body.created_at });
    expect(JSON.stringify(shown.body)).not.to.include(res.body.token);
  });

  it('stores only the SHA-256 of the token, and audits its generation without the secret', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${settingsUrl(org.org_id)}/token`, { method: 'POST', token: org.console_token });
    const rows = await store.db.query('SELECT * FROM scim_tokens WHERE org_id = $1', [org.org_id]);
    expect(JSON.stringify(rows)).not.to.include(res.body.token.slice(10));
    const audit = await audit_list(store.db, org.org_id);
    expect(audit.map((a) => a.action)).to.include('scim.token.rotate');
    expect(JSON.stringify(audit)).not.to.include(res.body.token.slice(10));
  });

  it('regenerating the token invalidates the previous one at once', async () => {
    const s = await seedScimOrg(cp);
    expect((await s.scim('GET', '/Users')).status).to.equal(200);
    const next = await call(`${settingsUrl(s.org.org_id)}/token`, { method: 'POST', token: s.org.console_token });
    expect(next.status).to.equal(201);
    expect((await s.scim('GET', '/Users')).status).to.equal(401);
    expect((await s.scim('GET', '/Users', undefined, { token: next.body.token })).status).to.equal(200);
    const active = await store.db.query('SELECT id FROM scim_tokens WHERE org_id = $1 AND revoked_at IS NULL', [s.org.org_id]);
    expect(active).to.have.length(1);
  });

  it('disabling SCIM makes every SCIM call 401; enabling again restores the same token', async () => {
    const s = await seedScimOrg(cp);
    const created = await s.scim('POST', '/Users', userBody('before.disable@example.test'));
    expect(created.status).to.equal(201);
    await call(settingsUrl(s.org.org_id), { method: 'PUT', token: s.org.console_token, body: { enabled: false } });
    for (const [method, path] of [
      ['GET', '/Users'],
      ['GET', `/Users/${created.body.id}`],
      ['DELETE', `/Users/${created.body.id}`],
      ['GET', '/ServiceProviderConfig'],
    ] as const) {
      const res = await s.scim(method, path);
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.equal('Bearer');
    }
    expect((await s.scim('POST', '/Users', userBody('while.disabled@example.test'))).status).to.equal(401);
    await call(settingsUrl(s.org.org_id), { method: 'PUT', token: s.org.console_token, body: { enabled: true } });
    expect((await s.scim('GET', `/Users/${created.body.id}`)).status).to.equal(200);
  });

  it('403 for a member on all three routes', async () => {
    const s = await seedScimOrg(cp);
    const created = await s.scim('POST', '/Users', userBody('plain.member@example.test'));
    const { token } = await openSession(cp.deps, store.db, s.org.org_id, created.body.id);
    const url = settingsUrl(s.org.org_id);
    expect((await call(url, { token })).status).to.equal(403);
    expect((await call(url, { method: 'PUT', token, body: { enabled: false } })).status).to.equal(403);
    expect((await call(`${url}/token`, { method: 'POST', token })).status).to.equal(403);
    expect((await s.scim('GET', '/Users')).status, 'the token still works').to.equal(200);
  });

  it("404 for another org's settings, even for its owner's peer", async () => {
    const a = await seedOrg(cp.deps);
    const b = await seedOrg(cp.deps);
    expect((await call(settingsUrl(b.org_id), { token: a.console_token })).status).to.equal(404);
    expect((await call(settingsUrl(b.org_id), { method: 'PUT', token: a.console_token, body: { enabled: true } })).status).to.equal(404);
    expect((await call(`${settingsUrl(b.org_id)}/token`, { method: 'POST', token: a.console_token })).status).to.equal(404);
    const bSettings = await call(settingsUrl(b.org_id), { token: b.console_token });
    expect(bSettings.body).to.include({ enabled: false, token: null });
  });

  it('401 without a console session', async () => {
    const org = await seedOrg(cp.deps);
    expect((await call(settingsUrl(org.org_id))).status).to.equal(401);
    expect((await call(`${settingsUrl(org.org_id)}/token`, { method: 'POST' })).status).to.equal(401);
  });
});
