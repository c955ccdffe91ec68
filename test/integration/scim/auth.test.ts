import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, seedScimOrg, userBody, type ScimAnswer } from '../../support/scim.js';
import { generateSecret } from '../../../shared/secrets.js';

function expect401(res: ScimAnswer, why: string): void {
  expect(res.status, why).to.equal(401);
  expect(res.headers.get('www-authenticate'), why).to.equal('Bearer');
  expect(res.headers.get('content-type'), why).to.include('application/scim+json');
  expect(res.body.schemas, why).to.deep.equal([ERROR_SCHEMA]);
  expect(res.body.status, why).to.equal('401');
  expect(res.body.detail, why).to.be.a('string');
}

describeEachStore('SCIM: provisioning-token authentication', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('401 without an Authorization header, and with a non-Bearer scheme', async () => {
    const s = await seedScimOrg(cp);
    expect401(await call(`${s.base}/Users`), 'no header');
    expect401(await call(`${s.base}/Users`, { headers: { authorization: `Basic ${Buffer.from(`x:${s.token}`).toString('base64')}` } }), 'Basic');
    expect401(await call(`${s.base}/Users`, { headers: { authorization: s.token } }), 'no scheme');
  });

  it('401 for malformed, unknown and checksum-broken tokens', async () => {
    const s = await seedScimOrg(cp);
    const broken = s.token.slice(0, -1) + (s.token.endsWith('A') ? 'B' : 'A');
    for (const token of ['nope', 'tgp_', broken, generateSecret('scimToken'), `${s.token}x`]) {
      expect401(await s.scim('GET', '/Users', undefined, { token }), token);
    }
  });

  it("401 for the org's own console token and for an API-key-shaped token", async () => {
    const s = await seedScimOrg(cp);
    expect401(await s.scim('GET', '/Users', undefined, { token: s.org.console_token }), 'console token');
    expect401(await s.scim('GET', '/Users', undefined, { token: generateSecret('apiKey') }), 'API key');
  });

  it("401 for another org's token on this org's URL, for reads and writes", async () => {
    const a = await seedScimOrg(cp);
    const b = await seedScimOrg(cp);
    const aUser = await a.scim('POST', '/Users', userBody('only.in.a@example.test'));
    expect(aUser.status).to.equal(201);
    expect401(await a.scim('GET', '/Users', undefined, { token: b.token }), 'list');
    expect401(await a.scim('GET', `/Users/${aUser.body.id}`, undefined, { token: b.token }), 'get');
    expect401(await a.scim('POST', '/Users', userBody('sneaky@example.test'), { token: b.token }), 'create');
    expect401(await a.scim('DELETE', `/Users/${aUser.body.id}`, undefined, { token: b.token }), 'delete');
    expect((await a.scim('GET', `/Users/${aUser.body.id}`)).status, 'untouched').to.equal(200);
  });

  it("404 for another org's user id on one's own URL", async () => {
    const a = await seedScimOrg(cp);
    const b = await seedScimOrg(cp);
    const bUser = await b.scim('POST', '/Users', userBody('only.in.b@example.test'));
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const body =
        method === 'PUT'
          ? userBody('only.in.b@example.test', { active: false })
          : method === 'PATCH'
            ? { Operations: [{ op: 'replace', path: 'active', value: false }] }
            : undefined;
      const res = await a.scim(method, `/Users/${bUser.body.id}`, body);
      expect(res.status, method).to.equal(404);
      expect(res.body.schemas).to.deep.equal([ERROR_SCHEMA]);
      expect(res.body.status).to.equal('404');
    }
    const still = await b.scim('GET', `/Users/${bUser.body.id}`);
    expect(still.status).to.equal(200);
    expect(still.body.active).to.equal(true);
  });

  it('401 for a malformed org id in the URL, and for a path outside /v2/orgs', async () => {
    const s = await seedScimOrg(cp);
    expect401(await call(`${cp.url}/v1/scim/v2/orgs/not-a-uuid/Users`, { token: s.token }), 'malformed org');
    expect401(await call(`${cp.url}/v1/scim/v2/orgs/${s.org.org_id}x/Users`, { token: s.token }), 'suffixed org');
    expect401(await call(`${cp.url}/v1/scim/v2/Users`), 'no token, other path');
  });

  it("no spelling of the path gets around the org check: other case, upper-case ids, another org's id", async () => {
    const a = await seedScimOrg(cp);
    const b = await seedScimOrg(cp);
    expect((await call(`${cp.url}/v1/scim/v2/Orgs/${a.org.org_id}/users`, { token: a.token })).status).to.equal(200);
    expect((await call(`${cp.url}/v1/scim/v2/orgs/${a.org.org_id.toUpperCase()}/Users`, { token: a.token })).status).to.equal(200);
    expect401(await call(`${cp.url}/v1/scim/v2/ORGS/${b.org.org_id}/Users`, { token: a.token }), 'upper-case path');
    expect401(await call(`${cp.url}/v1/scim/v2/orgs/${b.org.org_id}/ServiceProviderConfig`, { token: a.token }), 'discovery');
  });

  it('the token answers nothing on the console API', async () => {
    const s = await seedScimOrg(cp);
    expect((await call(`${cp.url}/v1/me`, { token: s.token })).status).to.equal(401);
  });
});
