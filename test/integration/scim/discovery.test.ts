import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { USER_SCHEMA, seedScimOrg, type ScimOrg } from '../../support/scim.js';

describeEachStore('SCIM: discovery endpoints', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  it('/ServiceProviderConfig says exactly what is supported', async () => {
    const res = await s.scim('GET', '/ServiceProviderConfig');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.include('application/scim+json');
    expect(res.body.schemas).to.deep.equal(['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig']);
    expect(res.body).to.deep.include({
      patch: { supported: true },
      bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      filter: { supported: true, maxResults: 200 },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
    });
    expect(res.body.authenticationSchemes).to.have.length(1);
    expect(res.body.authenticationSchemes[0]).to.include({ type: 'oauthbearertoken', primary: true });
    expect(res.body.meta.location).to.equal(`${s.base}/ServiceProviderConfig`);
  });

  it('/ResourceTypes lists User only, with the core schema and no extensions', async () => {
    const res = await s.scim('GET', '/ResourceTypes');
    expect(res.status).to.equal(200);
    expect(res.body.totalResults).to.equal(1);
    expect(res.body.Resources[0]).to.deep.include({ id: 'User', name: 'User', endpoint: '/Users', schema: USER_SCHEMA, schemaExtensions: [] });
    expect((await s.scim('GET', '/ResourceTypes/User')).body.id).to.equal('User');
    expect((await s.scim('GET', '/ResourceTypes/Group')).status).to.equal(404);
  });

  it('/Schemas describes the User attributes kept, userName immutable and unique', async () => {
    const res = await s.scim('GET', '/Schemas');
    expect(res.status).to.equal(200);
    expect(res.body.totalResults).to.equal(1);
    const schema = res.body.Resources[0];
    expect(schema.id).to.equal(USER_SCHEMA);
    const names = schema.attributes.map((a: { name: string }) => a.name);
    expect(names).to.deep.equal(['userName', 'externalId', 'name', 'displayName', 'active', 'emails']);
    expect(schema.attributes[0]).to.include({ mutability: 'immutable', uniqueness: 'server', required: true, caseExact: false });
    const one = await s.scim('GET', `/Schemas/${USER_SCHEMA}`);
    expect(one.body.id).to.equal(USER_SCHEMA);
    expect((await s.scim('GET', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group')).status).to.equal(404);
  });

  it('discovery needs the token like everything else', async () => {
    const res = await s.scim('GET', '/ServiceProviderConfig', undefined, { token: 'nope' });
    expect(res.status).to.equal(401);
  });
});
