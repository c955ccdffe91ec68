import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { USER_SCHEMA, patchBody, seedScimOrg, userBody, type ScimOrg } from '../../support/scim.js';

describeEachStore('SCIM: attributes and excludedAttributes on every User answer', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  let id: string;
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
    const created = await s.scim(
      'POST',
      '/Users',
      userBody('proj@example.test', {
        externalId: 'ext-proj',
        displayName: 'Pro J',
        emails: [
          { value: 'proj@example.test', type: 'work', primary: true },
          { value: 'home@example.test', type: 'home' },
        ],
      }),
    );
    id = created.body.id;
  });
  after(() => cp.close());

  it('attributes returns only what is named, plus id, schemas and userName (returned always)', async () => {
    const res = await s.scim('GET', `/Users/${id}${q({ attributes: 'displayName' })}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ schemas: [USER_SCHEMA], id, userName: 'proj@example.test', displayName: 'Pro J' });
  });

  it('sub-attributes: name.givenName, emails.value, meta.created; names case-insensitive, core URN accepted', async () => {
    const res = await s.scim(
      'GET',
      `/Users/${id}${q({ attributes: 'NAME.givenname, emails.VALUE,urn:ietf:params:scim:schemas:core:2.0:User:meta.created' })}`,
    );
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['emails', 'id', 'meta', 'name', 'schemas', 'userName']);
    expect(res.body.name).to.deep.equal({ givenName: 'Ada' });
    expect(res.body.emails).to.deep.equal([{ value: 'proj@example.test' }, { value: 'home@example.test' }]);
    expect(Object.keys(res.body.meta)).to.deep.equal(['created']);
  });

  it('excludedAttributes removes what is named, never id or schemas', async () => {
    const res = await s.scim('GET', `/Users/${id}${q({ excludedAttributes: 'emails,name.formatted,meta,id,schemas,externalId' })}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id, userName: 'proj@example.test', displayName: 'Pro J', active: true });
    expect(res.body.schemas).to.deep.equal([USER_SCHEMA]);
    expect(res.body).not.to.have.any.keys('emails', 'meta', 'externalId');
    expect(res.body.name).to.deep.equal({ givenName: 'Ada', familyName: 'Lovelace' });
  });

  it('applies to every User in a list, and to the answers of POST, PUT and PATCH', async () => {
    const list = await s.scim('GET', `/Users${q({ attributes: 'active', filter: 'userName eq "proj@example.test"' })}`);
    expect(list.body.Resources).to.deep.equal([{ schemas: [USER_SCHEMA], id, userName: 'proj@example.test', active: true }]);
    const all = await s.scim('GET', `/Users${q({ excludedAttributes: 'emails,meta,name' })}`);
    for (const u of all.body.Resources) expect(u).not.to.have.any.keys('emails', 'meta', 'name');

    const created = await s.scim('POST', `/Users${q({ attributes: 'externalId' })}`, userBody('proj2@example.test', { externalId: 'e2' }));
    expect(created.status).to.equal(201);
    expect(created.body).to.deep.equal({ schemas: [USER_SCHEMA], id: created.body.id, userName: 'proj2@example.test', externalId: 'e2' });
    expect(created.headers.get('location')).to.equal(`${s.base}/Users/${created.body.id}`);

    const put = await s.scim(
      'PUT',
      `/Users/${created.body.id}${q({ excludedAttributes: 'meta,emails,name' })}`,
      userBody('proj2@example.test', { displayName: 'Two' }),
    );
    expect(put.status).to.equal(200);
    expect(put.body).to.include({ displayName: 'Two', externalId: 'e2' });
    expect(put.body).not.to.have.any.keys('meta', 'emails', 'name');

    const patched = await s.scim(
      'PATCH',
      `/Users/${created.body.id}${q({ attributes: 'displayName' })}`,
      patchBody({ op: 'replace', path: 'displayName', value: 'Deux' }),
    );
    expect(patched.body).to.deep.equal({ schemas: [USER_SCHEMA], id: created.body.id, userName: 'proj2@example.test', displayName: 'Deux' });
  });

  it('names the user does not have select nothing; a malformed name is 400 invalidValue and nothing is written', async () => {
    const none = await s.scim('GET', `/Users/${id}${q({ attributes: 'title,name.middleName' })}`);
    expect(none.body).to.deep.equal({ schemas: [USER_SCHEMA], id, userName: 'proj@example.test' });
    for (const bad of ['emails[type eq "work"]', 'a.b.c', '1abc', 'name..givenName']) {
      const res = await s.scim('GET', `/Users/${id}${q({ attributes: bad })}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body.scimType, bad).to.equal('invalidValue');
    }
    const refused = await s.scim('POST', `/Users${q({ attributes: 'x y' })}`, userBody('never@example.test'));
    expect(refused.status).to.equal(400);
    const look = await s.scim('GET', `/Users${q({ filter: 'userName eq "never@example.test"' })}`);
    expect(look.body.totalResults, 'the create with a bad projection wrote nothing').to.equal(0);
  });
});
