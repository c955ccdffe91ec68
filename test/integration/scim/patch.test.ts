import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, patchBody, seedScimOrg, userBody, type ScimOrg } from '../../support/scim.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describeEachStore('SCIM: PATCH /Users/{id}', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  let n = 0;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  async function freshUser(extra: Record<string, unknown> = {}): Promise<{ id: string; body: Record<string, unknown> }> {
    n += 1;
    const res = await s.scim('POST', '/Users', userBody(`patch${n}@example.test`, { externalId: `ext-${n}`, displayName: `User ${n}`, ...extra }));
    expect(res.status).to.equal(201);
    return { id: res.body.id, body: res.body };
  }
  const patch = (id: string, ...ops: Record<string, unknown>[]) => s.scim('PATCH', `/Users/${id}`, patchBody(...ops));

  it('op and path are case-insensitive; active takes booleans and "True"/"False" strings', async () => {
    const { id } = await freshUser();
    const steps: [Record<string, unknown>, boolean][] = [
      [{ op: 'replace', path: 'active', value: false }, false],
      [{ op: 'Replace', path: 'Active', value: 'True' }, true],
      [{ op: 'REPLACE', path: 'ACTIVE', value: 'False' }, false],
      [{ op: 'add', path: 'urn:ietf:params:scim:schemas:core:2.0:User:active', value: 'true' }, true],
    ];
    for (const [op, active] of steps) {
      const res = await patch(id, op);
      expect(res.status, JSON.stringify(op)).to.equal(200);
      expect(res.headers.get('content-type')).to.include('application/scim+json');
      expect(res.body.active, JSON.stringify(op)).to.equal(active);
    }
  });

  it('path-less replace with {"active": false} and with dotted keys', async () => {
    const { id } = await freshUser();
    const off = await patch(id, { op: 'replace', value: { active: false } });
    expect(off.body.active).to.equal(false);
    const dotted = await patch(id, {
      op: 'Replace',
      value: {
        active: true,
        'name.givenName': 'Dot',
        'name.familyName': 'Ted',
        displayName: 'Dotted',
        'emails[type eq "work"].value': 'dot@example.test',
      },
    });
    expect(dotted.status).to.equal(200);
    expect(dotted.body).to.deep.include({ active: true, displayName: 'Dotted', name: { givenName: 'Dot', familyName: 'Ted', formatted: 'Dot Ted' } });
    expect(dotted.body.emails).to.deep.equal([{ value: 'dot@example.test', type: 'work', primary: true }]);
  });

  it('add, replace and remove on name.givenName, name.familyName, externalId and displayName', async () => {
    const { id } = await freshUser();
    let res = await patch(
      id,
      { op: 'replace', path: 'name.givenName', value: 'G' },
      { op: 'add', path: 'name.familyName', value: 'F' },
      { op: 'replace', path: 'externalId', value: 'ext-new' },
      { op: 'add', path: 'displayName', value: 'Shown' },
    );
    expect(res.body).to.deep.include({ name: { givenName: 'G', familyName: 'F', formatted: 'G F' }, externalId: 'ext-new', displayName: 'Shown' });
    res = await patch(id, { op: 'remove', path: 'name.givenName' }, { op: 'remove', path: 'externalId' }, { op: 'remove', path: 'displayName' });
    expect(res.status).to.equal(200);
    expect(res.body.name).to.deep.equal({ familyName: 'F', formatted: 'F' });
    expect(res.body).not.to.have.any.keys('externalId', 'displayName');
    res = await patch(id, { op: 'replace', path: 'name', value: { givenName: 'Only' } });
    expect(res.body.name, 'sub-attributes left out are unchanged').to.deep.equal({ givenName: 'Only', familyName: 'F', formatted: 'Only F' });
    res = await patch(id, { op: 'remove', path: 'name' });
    expect(res.body, 'a name with no part is left out, not answered as {}').not.to.have.property('name');
  });

  it('remove on active leaves it unassigned, which reads as the default: active', async () => {
    const { id } = await freshUser({ active: false });
    const res = await patch(id, { op: 'remove', path: 'active' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.active).to.equal(true);
    const [membership] = await store.db.query<{ status: string }>('SELECT status FROM memberships WHERE user_id = $1', [id]);
    expect(membership!.status).to.equal('active');
  });

  it('name.formatted the client sends is kept; changing a part without it derives it again', async () => {
    const { id } = await freshUser({ name: { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada King, Countess of Lovelace' } });
    let res = await s.scim('GET', `/Users/${id}`);
    expect(res.body.name.formatted).to.equal('Ada King, Countess of Lovelace');
    res = await patch(id, { op: 'replace', path: 'name.formatted', value: 'Lady Lovelace' });
    expect(res.body.name).to.deep.equal({ givenName: 'Ada', familyName: 'Lovelace', formatted: 'Lady Lovelace' });
    res = await patch(id, { op: 'replace', path: 'displayName', value: 'Unrelated' });
    expect(res.body.name.formatted, 'other changes leave it alone').to.equal('Lady Lovelace');
    res = await patch(id, { op: 'replace', path: 'name', value: { givenName: 'Augusta', formatted: 'Augusta Ada King' } });
    expect(res.body.name.formatted).to.equal('Augusta Ada King');
    res = await patch(id, { op: 'replace', path: 'name.familyName', value: 'King' });
    expect(res.body.name, 'a part changed without formatted: derived again').to.deep.equal({
      givenName: 'Augusta',
      familyName: 'King',
      formatted: 'Augusta King',
    });
    res = await patch(id, { op: 'remove', path: 'name.formatted' });
    expect(res.body.name.formatted).to.equal('Augusta King');
  });

  it('emails[type eq "work"].value replaces the work address, and creates it when there is none', async () => {
    const { id } = await freshUser({
      emails: [
        { value: 'old@example.test', type: 'work', primary: true },
        { value: 'home@example.test', type: 'home' },
      ],
    });
    let res = await patch(id, { op: 'replace', path: 'emails[type eq "work"].value', value: 'new@example.test' });
    expect(res.body.emails).to.deep.equal([
      { value: 'new@example.test', type: 'work', primary: true },
      { value: 'home@example.test', type: 'home' },
    ]);
    res = await patch(id, { op: 'Add', path: 'EMAILS[TYPE EQ "Work"].VALUE', value: 'newer@example.test' });
    expect(res.body.emails[0]).to.deep.equal({ value: 'newer@example.test', type: 'work', primary: true });
    expect(res.body.emails).to.have.length(2);
    res = await patch(id, { op: 'remove', path: 'emails[type eq "work"]' });
    expect(res.body.emails).to.deep.equal([{ value: 'home@example.test', type: 'home' }]);
    res = await patch(id, { op: 'replace', path: 'emails[type eq "work"].value', value: 'again@example.test' });
    expect(res.body.emails).to.deep.equal([
      { value: 'home@example.test', type: 'home' },
      { value: 'again@example.test', type: 'work' },
    ]);
    res = await patch(id, { op: 'replace', path: 'emails[value eq "again@example.test"].primary', value: true });
    expect(res.body.emails.find((e: { type: string }) => e.type === 'work').primary).to.equal(true);
  });

  it('emails without a filter: add appends, replace sets the list, remove clears it; one primary at most', async () => {
    const { id } = await freshUser();
    let res = await patch(id, { op: 'add', path: 'emails', value: [{ value: 'second@example.test', type: 'home', primary: true }] });
    expect(res.body.emails).to.have.length(2);
    expect(res.body.emails.filter((e: { primary?: boolean }) => e.primary === true)).to.have.length(1);
    expect(res.body.emails[1]).to.deep.equal({ value: 'second@example.test', type: 'home', primary: true });
    res = await patch(id, { op: 'replace', path: 'emails', value: [{ value: 'only@example.test' }] });
    expect(res.body.emails).to.deep.equal([{ value: 'only@example.test' }]);
    res = await patch(id, { op: 'remove', path: 'emails' });
    expect(res.body, 'RFC 7644 §3.5.2.2: the attribute is unassigned').not.to.have.property('emails');
    expect((await s.scim('GET', `/Users/${id}`)).body, 'and reads back removed').not.to.have.property('emails');
  });

  it('a value-filtered remove of every email leaves emails unassigned; one of several leaves the rest', async () => {
    const { id } = await freshUser();
    let res = await patch(id, { op: 'add', path: 'emails', value: [{ value: 'two@example.test', type: 'home' }] });
    expect(res.body.emails).to.have.length(2);
    res = await patch(id, { op: 'remove', path: 'emails[value eq "two@example.test"]' });
    expect(res.body.emails).to.have.length(1);
    res = await patch(id, { op: 'remove', path: 'emails[type eq "work"]' });
    expect(res.body).not.to.have.property('emails');
    expect((await s.scim('GET', `/Users/${id}`)).body).not.to.have.property('emails');
  });

  it('attributes of the User schema and enterprise extension it does not keep are accepted and ignored', async () => {
    const { id, body } = await freshUser();
    const res = await patch(
      id,
      { op: 'replace', path: 'title', value: 'Engineer' },
      { op: 'Add', path: 'phoneNumbers[type eq "work"].value', value: '+1 555' },
      { op: 'replace', path: `${ENTERPRISE}:department`, value: 'R&D' },
      { op: 'replace', path: `${ENTERPRISE}:manager`, value: { value: 'someone' } },
      { op: 'replace', path: 'preferredLanguage', value: 'en' },
      { op: 'replace', value: { [ENTERPRISE]: { employeeNumber: '7' }, locale: 'en-US' } },
    );
    expect(res.status).to.equal(200);
    expect(res.body).not.to.have.any.keys('title', 'phoneNumbers', ENTERPRISE, 'preferredLanguage', 'locale');
    const { meta: _m, ...rest } = res.body;
    const { meta: _b, ...before } = body;
    expect(rest).to.deep.equal(before);
  });

  it('is atomic: one invalid operation → 400 and nothing changes', async () => {
    const { id, body } = await freshUser();
    const res = await patch(
      id,
      { op: 'replace', path: 'active', value: false },
      { op: 'replace', path: 'displayName', value: 'Changed' },
      { op: 'replace', path: 'name.nickname', value: 'nope' },
    );
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.include({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidPath' });
    const got = await s.scim('GET', `/Users/${id}`);
    expect(got.body).to.deep.equal(body);
    const membership = await store.db.query<{ status: string }>('SELECT status FROM memberships WHERE user_id = $1', [id]);
    expect(membership[0]!.status).to.equal('active');
  });

  it('400 invalidPath for paths it does not support', async () => {
    const { id } = await freshUser();
    for (const path of [
      'foo',
      'name.middle',
      'emails.value',
      'emails[display eq "x"].value',
      'emails[type ne "work"].value',
      'emails[type eq work].value',
      'emails[type eq "work"].color',
      'active.value',
      'externalId[type eq "x"]',
      'urn:example:custom:2.0:User:thing',
      `${ENTERPRISE}:shoeSize`,
      'emails[type eq "work"',
      '$$$',
      'x'.repeat(600),
    ]) {
      const res = await patch(id, { op: 'replace', path, value: 'v' });
      expect(res.status, path).to.equal(400);
      expect(res.body.scimType, path).to.equal('invalidPath');
    }
  });

  it('400 invalidValue for values of the wrong type', async () => {
    const { id } = await freshUser();
    for (const op of [
      { op: 'replace', path: 'active', value: 'yes' },
      { op: 'replace', path: 'active', value: null },
      { op: 'replace', path: 'active' },
      { op: 'replace', path: 'displayName', value: 5 },
      { op: 'replace', path: 'name', value: 'Full Name' },
      { op: 'replace', path: 'emails[type eq "work"].value', value: '' },
      { op: 'replace', path: 'emails', value: [{ type: 'work' }] },
      { op: 'replace', value: 'not an object' },
      { op: 'replace', path: 'externalId', value: 'x'.repeat(300) },
    ]) {
      const res = await patch(id, op);
      expect(res.status, JSON.stringify(op)).to.equal(400);
      expect(res.body.scimType, JSON.stringify(op)).to.equal('invalidValue');
    }
  });

  it('400 mutability for read-only attributes, noTarget for a path-less remove or an unmatched sub-attribute', async () => {
    const { id } = await freshUser();
    for (const path of ['id', 'meta', 'schemas']) {
      const res = await patch(id, { op: 'replace', path, value: 'x' });
      expect(res.body.scimType, path).to.equal('mutability');
    }
    expect((await patch(id, { op: 'remove' })).body.scimType).to.equal('noTarget');
    expect((await patch(id, { op: 'replace', path: 'emails[type eq "home"].primary', value: true })).body.scimType).to.equal('noTarget');
  });

  it('400 invalidSyntax for a body that is not a PatchOp', async () => {
    const { id } = await freshUser();
    for (const body of [
      '[]',
      '{}',
      '{"Operations": []}',
      '{"Operations": {}}',
      '{"Operations": [1]}',
      '{"Operations": [{"op": "merge", "path": "active"}]}',
      '{"Operations": [{"path": "active", "value": false}]}',
      'nope',
    ]) {
      const res = await s.scim('PATCH', `/Users/${id}`, body);
      expect(res.status, body).to.equal(400);
      expect(res.body.scimType, body).to.equal('invalidSyntax');
    }
  });

  it('accepts lower-case "operations" and a missing schemas member', async () => {
    const { id } = await freshUser();
    const res = await s.scim('PATCH', `/Users/${id}`, { operations: [{ op: 'replace', path: 'displayName', value: 'Lenient' }] });
    expect(res.status).to.equal(200);
    expect(res.body.displayName).to.equal('Lenient');
  });

  it('bumps meta.lastModified and keeps meta.created', async () => {
    const { id, body } = await freshUser();
    const res = await patch(id, { op: 'replace', path: 'displayName', value: 'Later' });
    const meta = body.meta as { created: string; lastModified: string };
    expect(res.body.meta.created).to.equal(meta.created);
    expect(Date.parse(res.body.meta.lastModified)).to.be.at.least(Date.parse(meta.lastModified));
  });
});
