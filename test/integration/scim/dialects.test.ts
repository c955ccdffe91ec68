import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { PATCH_OP, USER_SCHEMA, seedScimOrg, type ScimOrg } from '../../support/scim.js';

/**
 * Requests exactly as the two most common connectors send them (bodies and
 * query strings as their documentation and logs show), so a change that
 * would quarantine a real integration fails here first.
 */
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describeEachStore('SCIM dialect: Okta', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  const oktaUser = (userName: string, extra: Record<string, unknown> = {}) => ({
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId: '00ujl29u0le5T6Aj10h7',
    groups: [],
    password: '1mz050nq',
    active: true,
    ...extra,
  });
  // Okta's own encoding of the lookup it does before every create.
  const oktaLookup = (userName: string) =>
    call(`${s.base}/Users?filter=userName%20eq%20%22${encodeURIComponent(userName)}%22&startIndex=1&count=100`, {
      token: s.token,
      headers: { accept: 'application/scim+json', 'user-agent': 'Okta SCIM Client 1.0.0' },
    });

  it('lookup of an unknown userName → 200 with totalResults 0', async () => {
    const res = await oktaLookup(`random-${Date.now()}@okta.local`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ totalResults: 0, startIndex: 1, itemsPerPage: 0 });
    expect(res.body.Resources).to.deep.equal([]);
  });

  it('create with password, groups, displayName and locale: 201, the extras are never echoed; lookup finds it', async () => {
    const res = await s.scim('POST', '/Users', oktaUser('test.user@okta.local'));
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ userName: 'test.user@okta.local', displayName: 'Test User', externalId: '00ujl29u0le5T6Aj10h7', active: true });
    expect(res.body).not.to.have.any.keys('password', 'groups', 'locale');
    expect(JSON.stringify(res.body)).not.to.include('1mz050nq');
    const found = await oktaLookup('test.user@okta.local');
    expect(found.body.totalResults).to.equal(1);
    expect(found.body.Resources[0].id).to.equal(res.body.id);
  });

  it('deactivate by full-body PUT with active:false', async () => {
    const created = await s.scim('POST', '/Users', oktaUser('put.deactivate@okta.local'));
    const res = await s.scim('PUT', `/Users/${created.body.id}`, {
      schemas: [USER_SCHEMA],
      id: created.body.id,
      userName: 'put.deactivate@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: 'put.deactivate@okta.local', type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: false,
      meta: created.body.meta,
    });
    expect(res.status).to.equal(200);
    expect(res.body.active).to.equal(false);
    expect(res.body).not.to.have.any.keys('password', 'groups', 'locale');
    const [m] = await store.db.query<{ status: string }>('SELECT status FROM memberships WHERE user_id = $1', [created.body.id]);
    expect(m!.status).to.equal('inactive');
  });

  it('deactivate by path-less PATCH {"op":"replace","value":{"active":false}}', async () => {
    const created = await s.scim('POST', '/Users', oktaUser('patch.deactivate@okta.local'));
    const res = await s.scim('PATCH', `/Users/${created.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(res.status).to.equal(200);
    expect(res.body.active).to.equal(false);
  });

  it('a duplicate create → 409 uniqueness (Okta then links the existing user by lookup)', async () => {
    await s.scim('POST', '/Users', oktaUser('dup@okta.local'));
    const res = await s.scim('POST', '/Users', oktaUser('Dup@Okta.local'));
    expect(res.status).to.equal(409);
    expect(res.body.scimType).to.equal('uniqueness');
    expect((await oktaLookup('dup@okta.local')).body.totalResults).to.equal(1);
  });
});

describeEachStore('SCIM dialect: Microsoft Entra ID', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  const entraUser = (userName: string, externalId: string) => ({
    schemas: [USER_SCHEMA, ENTERPRISE],
    externalId,
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: `${userName}@testuser.com` }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
    [ENTERPRISE]: { employeeNumber: '1234', department: 'Eng', manager: { value: 'mgr' } },
  });
  const entraPatch = (id: string, operations: Record<string, unknown>[]) =>
    s.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: operations });

  it('create with the enterprise extension, meta, roles: [] and name.formatted → 201', async () => {
    const res = await s.scim('POST', '/Users', entraUser('Test_User_ab6490ee', '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef'));
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ userName: 'Test_User_ab6490ee', externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef', active: true });
    expect(res.body.name).to.deep.equal({ givenName: 'givenName', familyName: 'familyName', formatted: 'givenName familyName' });
    expect(res.body).not.to.have.any.keys('roles', ENTERPRISE);
    expect(res.body.schemas).to.deep.equal([USER_SCHEMA]);
    expect(res.body.meta.resourceType).to.equal('User');
  });

  it('filters on userName eq and on externalId eq', async () => {
    const created = await s.scim('POST', '/Users', entraUser('Test_User_filter', 'ext-filter-1'));
    const byName = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "Test_User_filter"')}`);
    expect(byName.body.totalResults).to.equal(1);
    expect(byName.body.Resources[0].id).to.equal(created.body.id);
    const byExt = await s.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "ext-filter-1"')}`);
    expect(byExt.body.totalResults).to.equal(1);
    const miss = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "non-existent user"')}`);
    expect(miss.status).to.equal(200);
    expect(miss.body.totalResults).to.equal(0);
  });

  it('PATCH "op":"Replace" with "value":"False" and then "True"', async () => {
    const created = await s.scim('POST', '/Users', entraUser('Test_User_active', 'ext-active'));
    const off = await entraPatch(created.body.id, [{ op: 'Replace', path: 'active', value: 'False' }]);
    expect(off.status).to.equal(200);
    expect(off.body.active).to.equal(false);
    const on = await entraPatch(created.body.id, [{ op: 'Replace', path: 'active', value: 'True' }]);
    expect(on.body.active).to.equal(true);
  });

  it('one PATCH replacing displayName, the work email, given and family name and externalId applies all of them', async () => {
    const created = await s.scim('POST', '/Users', entraUser('Test_User_multi', 'ext-multi'));
    const res = await entraPatch(created.body.id, [
      { op: 'Replace', path: 'displayName', value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
      { op: 'Replace', path: 'name.givenName', value: 'updatedGivenName' },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      { op: 'Replace', path: 'externalId', value: 'updatedExternalId' },
    ]);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({
      displayName: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName',
      externalId: 'updatedExternalId',
      name: { givenName: 'updatedGivenName', familyName: 'updatedFamilyName', formatted: 'updatedGivenName updatedFamilyName' },
      emails: [{ primary: true, type: 'work', value: 'updatedEmail@microsoft.com' }],
    });
  });

  it('the same multi-operation PATCH with one bad operation applies none of them', async () => {
    const created = await s.scim('POST', '/Users', entraUser('Test_User_multi_bad', 'ext-multi-bad'));
    const res = await entraPatch(created.body.id, [
      { op: 'Replace', path: 'displayName', value: 'changed' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'changed@microsoft.com' },
      { op: 'Replace', path: 'name.givenName', value: 'changed' },
      { op: 'Replace', path: 'name.familyName', value: 'changed' },
      { op: 'Replace', path: 'externalId', value: 42 },
    ]);
    expect(res.status).to.equal(400);
    expect(res.body.scimType).to.equal('invalidValue');
    const got = await s.scim('GET', `/Users/${created.body.id}`);
    expect(got.body).to.deep.equal(created.body);
  });

  it('path-less Replace with dotted keys', async () => {
    const created = await s.scim('POST', '/Users', entraUser('Test_User_dotted', 'ext-dotted'));
    const res = await entraPatch(created.body.id, [
      { op: 'Replace', value: { 'name.givenName': 'Dotted', 'name.familyName': 'Keys', displayName: 'Dotted Keys', active: 'False' } },
    ]);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({
      displayName: 'Dotted Keys',
      active: false,
      name: { givenName: 'Dotted', familyName: 'Keys', formatted: 'Dotted Keys' },
    });
  });

  it('"Add" on emails[type eq "work"].value replaces the work address instead of adding a second one', async () => {
    const created = await s.scim('POST', '/Users', entraUser('Test_User_add_email', 'ext-add-email'));
    const res = await entraPatch(created.body.id, [
      { op: 'Replace', path: 'title', value: 'tester' },
      { op: 'Add', path: 'emails[type eq "work"].value', value: 'moved@joe.com' },
    ]);
    expect(res.status).to.equal(200);
    expect(res.body.emails).to.deep.equal([{ primary: true, type: 'work', value: 'moved@joe.com' }]);
  });

  it('null-valued attributes on create are treated as absent', async () => {
    const res = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA, ENTERPRISE],
      externalId: null,
      userName: 'Test_User_nulls',
      active: true,
      displayName: null,
      emails: [{ primary: true, type: 'work', value: 'nulls@testuser.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: null, familyName: null, givenName: 'OnlyGiven' },
      title: null,
      preferredLanguage: null,
      roles: [],
      [ENTERPRISE]: null,
    });
    expect(res.status).to.equal(201);
    expect(res.body).not.to.have.any.keys('externalId', 'displayName', 'title', 'preferredLanguage');
    expect(res.body.name).to.deep.equal({ givenName: 'OnlyGiven', formatted: 'OnlyGiven' });
  });
});

describeEachStore('SCIM: concurrent creates of one userName', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('50 at once → exactly one 201 and forty-nine 409 uniqueness, never a 5xx', async () => {
    const s = await seedScimOrg(cp);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: i % 2 ? 'race@example.test' : 'RACE@example.test', externalId: `ext-${i}` }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((c) => c === 201)).to.have.length(1);
    expect(statuses.filter((c) => c === 409)).to.have.length(49);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.scimType).to.equal('uniqueness');
    const rows = await store.db.query('SELECT id FROM users WHERE org_id = $1 AND lower(user_name) = $2', [s.org.org_id, 'race@example.test']);
    expect(rows).to.have.length(1);
    const memberships = await store.db.query(
      'SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE lower(u.user_name) = $1 AND u.org_id = $2',
      ['race@example.test', s.org.org_id],
    );
    expect(memberships).to.have.length(1);
  });
});
