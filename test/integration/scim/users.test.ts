import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { bootstrapOrg } from '../../../control-plane/services/orgs/bootstrap.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, USER_SCHEMA, patchBody, seedScimOrg, userBody, type ScimAnswer, type ScimOrg } from '../../support/scim.js';

function expectScimError(res: ScimAnswer, status: number, scimType?: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.headers.get('content-type')).to.include('application/scim+json');
  expect(res.body.schemas).to.deep.equal([ERROR_SCHEMA]);
  expect(res.body.status).to.equal(String(status));
  expect(res.body.detail).to.be.a('string');
  if (scimType) expect(res.body.scimType).to.equal(scimType);
}

describeEachStore('SCIM: /Users create, read, replace, delete', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  it('201 with Location = meta.location and the User in application/scim+json', async () => {
    const res = await s.scim('POST', '/Users', userBody('grace@example.test', { externalId: 'ext-grace', displayName: 'Grace H' }));
    expect(res.status).to.equal(201);
    expect(res.headers.get('content-type')).to.include('application/scim+json');
    expect(res.headers.get('location')).to.equal(res.body.meta.location);
    expect(res.body.meta.location).to.equal(`${s.base}/Users/${res.body.id}`);
    expect(res.body).to.deep.include({
      schemas: [USER_SCHEMA],
      userName: 'grace@example.test',
      externalId: 'ext-grace',
      displayName: 'Grace H',
      active: true,
      name: { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada Lovelace' },
      emails: [{ value: 'grace@example.test', type: 'work', primary: true }],
    });
    expect(res.body.meta.resourceType).to.equal('User');
    expect(Date.parse(res.body.meta.created)).not.to.be.NaN;
    expect(Date.parse(res.body.meta.lastModified)).not.to.be.NaN;
    const got = await s.scim('GET', `/Users/${res.body.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(res.body);
  });

  it('accepts application/json as well as application/scim+json; 400 invalidSyntax for another media type', async () => {
    const json = await call(`${s.base}/Users`, { method: 'POST', token: s.token, body: userBody('json.body@example.test') });
    expect(json.status).to.equal(201);
    const charset = await s.scim('POST', '/Users', userBody('charset@example.test'), {
      headers: { 'content-type': 'application/scim+json; charset=utf-8' },
    });
    expect(charset.status).to.equal(201);
    const bom = await s.scim('POST', '/Users', `\uFEFF${JSON.stringify(userBody('bom@example.test'))}`);
    expect(bom.status, 'a UTF-8 byte-order mark is tolerated').to.equal(201);
    const text = await s.scim('POST', '/Users', userBody('text.body@example.test'), { headers: { 'content-type': 'text/plain' } });
    expectScimError(text, 400, 'invalidSyntax');
  });

  it('400 invalidValue without a userName, with a blank one, or with a non-string one', async () => {
    for (const userName of [undefined, null, '', '   ', 42, ['a'], { value: 'a' }]) {
      const body = userBody('x');
      if (userName === undefined) delete body.userName;
      else body.userName = userName;
      expectScimError(await s.scim('POST', '/Users', body), 400, 'invalidValue');
    }
  });

  it('400 invalidSyntax for unparsable JSON, an empty body, and a body that is not an object', async () => {
    for (const body of ['{"userName":', '', '[]', '[{"userName":"a@b"}]', '42', '"text"', 'null', 'true']) {
      expectScimError(await s.scim('POST', '/Users', body), 400, 'invalidSyntax');
    }
  });

  it('400 invalidValue for attributes of the wrong type, too long, or holding NUL', async () => {
    const cases: Record<string, unknown>[] = [
      { active: 'maybe' },
      { active: 1 },
      { name: 'Ada Lovelace' },
      { name: { givenName: 7 } },
      { emails: 'a@b.test' },
      { emails: [{ type: 'work' }] },
      { emails: [42] },
      { emails: [{ value: 'a@b.test', primary: 'sometimes' }] },
      { externalId: 12 },
      { displayName: 'x'.repeat(257) },
      { displayName: 'nul\u0000byte' },
      { emails: [{ value: 'lone\udfffsurrogate@example.test' }] },
      { name: { givenName: 'half\ud800' } },
      { userName: `${'u'.repeat(257)}@example.test` },
      { emails: Array.from({ length: 21 }, (_, i) => ({ value: `e${i}@example.test` })) },
    ];
    for (const extra of cases) {
      expectScimError(await s.scim('POST', '/Users', userBody('typed@example.test', extra)), 400, 'invalidValue');
    }
    const none = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "typed@example.test"')}`);
    expect(none.body.totalResults, 'nothing was created').to.equal(0);
  });

  it('400 invalidValue for a body over the 64 KiB limit, and nothing is created', async () => {
    const res = await s.scim('POST', '/Users', userBody('big@example.test', { blob: 'x'.repeat(70 * 1024) }));
    expectScimError(res, 400, 'invalidValue');
    const none = await s.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "big@example.test"')}`);
    expect(none.body.totalResults).to.equal(0);
  });

  it('400 invalidValue for an oversized chunked body that declares no length', async () => {
    const { request } = await import('node:http');
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${s.base}/Users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/scim+json', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"userName":"chunked@example.test","blob":"');
      for (let i = 0; i < 80; i++) req.write('x'.repeat(1024));
      req.end('"}');
    });
    expect(answer.status).to.equal(400);
    expect(JSON.parse(answer.body)).to.include({ status: '400', scimType: 'invalidValue' });
  });

  it('409 uniqueness when the userName differs only in case', async () => {
    expect((await s.scim('POST', '/Users', userBody('Case.Test@Example.test'))).status).to.equal(201);
    for (const userName of ['Case.Test@Example.test', 'case.test@example.test', 'CASE.TEST@EXAMPLE.TEST']) {
      expectScimError(await s.scim('POST', '/Users', userBody(userName)), 409, 'uniqueness');
    }
  });

  it('409 uniqueness for the userName of a user the org already has from bootstrap', async () => {
    expectScimError(await s.scim('POST', '/Users', userBody(`OWNER@${s.org.org_slug}.test`)), 409, 'uniqueness');
  });

  it('treats null-valued attributes on create as absent', async () => {
    const res = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      userName: 'nulls@example.test',
      externalId: null,
      displayName: null,
      active: null,
      name: { givenName: null, familyName: 'Only' },
      emails: null,
      title: null,
    });
    expect(res.status).to.equal(201);
    expect(res.body.active).to.equal(true);
    expect(res.body).not.to.have.any.keys('externalId', 'displayName', 'title');
    expect(res.body.name).to.deep.equal({ familyName: 'Only', formatted: 'Only' });
    expect(res.body, 'no emails is unassigned, left out').not.to.have.property('emails');
  });

  it('matches attribute names case-insensitively and ignores attributes it does not keep', async () => {
    const res = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      USERNAME: 'shouty@example.test',
      ExternalID: 'ext-shouty',
      Name: { GIVENNAME: 'Sh', familyname: 'Outy' },
      password: 'hunter2',
      groups: [{ value: 'g1' }],
      locale: 'en-US',
      nickName: 'shh',
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ userName: 'shouty@example.test', externalId: 'ext-shouty' });
    expect(res.body.name).to.include({ givenName: 'Sh', familyName: 'Outy' });
    expect(res.body).not.to.have.any.keys('password', 'groups', 'locale', 'nickName', 'USERNAME');
    expect(JSON.stringify(res.body)).not.to.include('hunter2');
  });

  it('keeps one primary email: the first that claims it', async () => {
    const res = await s.scim(
      'POST',
      '/Users',
      userBody('two.primaries@example.test', {
        emails: [
          { value: 'one@example.test', type: 'work', primary: true },
          { value: 'two@example.test', type: 'home', primary: 'True' },
        ],
      }),
    );
    expect(res.status).to.equal(201);
    expect(res.body.emails).to.deep.equal([
      { value: 'one@example.test', type: 'work', primary: true },
      { value: 'two@example.test', type: 'home' },
    ]);
  });

  it('404 SCIM error for an unknown id and for malformed ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', '1', "'; DROP TABLE users; --", 'a'.repeat(300)]) {
      expectScimError(await s.scim('GET', `/Users/${encodeURIComponent(id)}`), 404);
      expectScimError(await s.scim('DELETE', `/Users/${encodeURIComponent(id)}`), 404);
    }
  });

  it('PUT replaces the mutable attributes and answers 200 with the User', async () => {
    const created = await s.scim('POST', '/Users', userBody('put.me@example.test', { externalId: 'ext-put', displayName: 'Old' }));
    const res = await s.scim('PUT', `/Users/${created.body.id}`, {
      schemas: [USER_SCHEMA],
      userName: 'put.me@example.test',
      externalId: 'ext-put-2',
      name: { givenName: 'New', familyName: 'Name' },
      emails: [{ value: 'new@example.test', type: 'home' }],
      active: true,
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.include('application/scim+json');
    expect(res.body).to.deep.include({
      id: created.body.id,
      userName: 'put.me@example.test',
      externalId: 'ext-put-2',
      name: { givenName: 'New', familyName: 'Name', formatted: 'New Name' },
      emails: [{ value: 'new@example.test', type: 'home' }],
    });
    expect(res.body, 'displayName was left out, so it is cleared').not.to.have.property('displayName');
    expect(res.body.meta.created).to.equal(created.body.meta.created);
  });

  it('PUT that tries to change userName keeps the original; externalId and active are kept when left out', async () => {
    const created = await s.scim('POST', '/Users', userBody('immutable@example.test', { externalId: 'ext-imm' }));
    const res = await s.scim('PUT', `/Users/${created.body.id}`, { schemas: [USER_SCHEMA], userName: 'renamed@example.test', displayName: 'R' });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ userName: 'immutable@example.test', externalId: 'ext-imm', active: true, displayName: 'R' });
    const free = await s.scim('POST', '/Users', userBody('renamed@example.test'));
    expect(free.status, 'the attempted new name was not taken').to.equal(201);
  });

  it('PATCH that tries to change userName keeps the original and applies the rest', async () => {
    const created = await s.scim('POST', '/Users', userBody('patch.imm@example.test'));
    const res = await s.scim(
      'PATCH',
      `/Users/${created.body.id}`,
      patchBody({ op: 'replace', path: 'userName', value: 'other@example.test' }, { op: 'replace', path: 'displayName', value: 'Kept' }),
    );
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ userName: 'patch.imm@example.test', displayName: 'Kept' });
    const pathless = await s.scim('PATCH', `/Users/${created.body.id}`, patchBody({ op: 'replace', value: { userName: 'x@example.test' } }));
    expect(pathless.body.userName).to.equal('patch.imm@example.test');
  });

  it('PUT without userName (RFC 7644 §3.5.1) is 400 invalidValue and changes nothing, active:false included', async () => {
    const created = await s.scim('POST', '/Users', userBody('put.required@example.test', { displayName: 'Before' }));
    const activeBefore = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1 AND status = $2', [
      created.body.id,
      'active',
    ]);
    expect(activeBefore[0]!.n).to.equal(1);
    for (const body of [
      { schemas: [USER_SCHEMA], active: false, displayName: 'After' },
      { schemas: [USER_SCHEMA], usrName: 'put.required@example.test', active: false },
      { schemas: [USER_SCHEMA], userName: null, active: false },
    ]) {
      expectScimError(await s.scim('PUT', `/Users/${created.body.id}`, body), 400, 'invalidValue');
    }
    const got = await s.scim('GET', `/Users/${created.body.id}`);
    expect(got.body).to.deep.equal(created.body);
    const after = await store.db.query<{ status: string }>('SELECT status FROM memberships WHERE user_id = $1', [created.body.id]);
    expect(after[0]!.status, 'the membership was not deactivated').to.equal('active');
  });

  it('name.formatted sent on create and PUT is kept; derived from the parts only when none was sent', async () => {
    const created = await s.scim(
      'POST',
      '/Users',
      userBody('formatted@example.test', { name: { givenName: 'Jean', familyName: 'Dupont', formatted: 'M. Jean Dupont' } }),
    );
    expect(created.body.name).to.deep.equal({ givenName: 'Jean', familyName: 'Dupont', formatted: 'M. Jean Dupont' });
    const put = await s.scim(
      'PUT',
      `/Users/${created.body.id}`,
      userBody('formatted@example.test', { name: { givenName: 'Jean', familyName: 'Martin' } }),
    );
    expect(put.body.name).to.deep.equal({ givenName: 'Jean', familyName: 'Martin', formatted: 'Jean Martin' });
    // Echoing the derived value back (a connector PUTting what it read) does not pin it.
    await s.scim('PUT', `/Users/${created.body.id}`, userBody('formatted@example.test', { name: put.body.name }));
    const [row] = await store.db.query<{ name_formatted: string | null }>('SELECT name_formatted FROM users WHERE id = $1', [created.body.id]);
    expect(row!.name_formatted).to.equal(null);
    const renamed = await s.scim('PATCH', `/Users/${created.body.id}`, patchBody({ op: 'replace', path: 'name.givenName', value: 'Paul' }));
    expect(renamed.body.name.formatted).to.equal('Paul Martin');
  });

  it('a user without any name part has no name attribute at all (never an empty object)', async () => {
    const res = await s.scim('POST', '/Users', userBody('nameless@example.test', { name: undefined }));
    expect(res.status).to.equal(201);
    expect(res.body).not.to.have.property('name');
    expect((await s.scim('GET', `/Users/${res.body.id}`)).body).not.to.have.property('name');
  });

  it('the bootstrap owner: no name object without --owner-name, name.givenName/familyName with it', async () => {
    const owner = async (org: ScimOrg) =>
      (await org.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "owner@${org.org.org_slug}.test"`)}`)).body.Resources[0];
    expect(await owner(s), 'no empty name: {} for tools that read name.givenName as soon as name exists').not.to.have.property('name');
    const slug = `named-${process.pid}-${store.name}`;
    const named = await seedScimOrg(
      cp,
      await bootstrapOrg(cp.deps, { slug, name: 'Named', ownerEmail: `owner@${slug}.test`, ownerName: 'Ada King Lovelace' }),
    );
    const resource = await owner(named);
    expect(resource.name).to.deep.equal({ givenName: 'Ada King', familyName: 'Lovelace', formatted: 'Ada King Lovelace' });
    expect(resource.displayName).to.equal('Ada King Lovelace');
  });

  it('PUT validates like create: 400 for garbage, nothing changes', async () => {
    const created = await s.scim('POST', '/Users', userBody('put.garbage@example.test'));
    expectScimError(await s.scim('PUT', `/Users/${created.body.id}`, '[]'), 400, 'invalidSyntax');
    expectScimError(await s.scim('PUT', `/Users/${created.body.id}`, { userName: 'put.garbage@example.test', active: 'nah' }), 400, 'invalidValue');
    const got = await s.scim('GET', `/Users/${created.body.id}`);
    expect(got.body).to.deep.equal(created.body);
  });

  it('204 on DELETE, then 404 for every operation on that id; the userName is reusable with a new id', async () => {
    const created = await s.scim('POST', '/Users', userBody('gone@example.test'));
    const id = created.body.id;
    const del = await s.scim('DELETE', `/Users/${id}`);
    expect(del.status).to.equal(204);
    expect(del.body).to.equal(undefined);
    expectScimError(await s.scim('GET', `/Users/${id}`), 404);
    expectScimError(await s.scim('PUT', `/Users/${id}`, userBody('gone@example.test')), 404);
    expectScimError(await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', path: 'active', value: true })), 404);
    expectScimError(await s.scim('DELETE', `/Users/${id}`), 404);
    const again = await s.scim('POST', '/Users', userBody('GONE@example.test'));
    expect(again.status).to.equal(201);
    expect(again.body.id).not.to.equal(id);
  });

  it('404 SCIM error for /Groups and unknown endpoints; 405 for a method an endpoint lacks', async () => {
    expectScimError(await s.scim('GET', '/Groups'), 404);
    expectScimError(await s.scim('POST', '/Groups', { displayName: 'g' }), 404);
    expectScimError(await s.scim('GET', '/Bulk'), 404);
    expectScimError(await s.scim('POST', '/ServiceProviderConfig', {}), 405);
  });
});
