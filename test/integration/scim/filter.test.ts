import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, seedScimOrg, userBody, type ScimOrg } from '../../support/scim.js';

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

describeEachStore('SCIM: GET /Users filters and paging', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  let other: ScimOrg;
  const list = (query: string) => s.scim('GET', `/Users${query}`);
  const filter = (expr: string, rest = '') => list(`?filter=${encodeURIComponent(expr)}${rest}`);

  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
    other = await seedScimOrg(cp);
    for (let i = 1; i <= 5; i++) {
      const res = await s.scim('POST', '/Users', userBody(`Person${i}@Example.test`, { externalId: `Ext-${i}` }));
      expect(res.status).to.equal(201);
    }
    // Same names in another org: never visible from this one.
    await other.scim('POST', '/Users', userBody('Person1@Example.test', { externalId: 'Ext-1' }));
  });
  after(() => cp.close());

  it('200 list response of every user of the org (the bootstrap owner too) without a filter', async () => {
    const res = await list('');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.include('application/scim+json');
    expect(res.body.schemas).to.deep.equal([LIST]);
    expect(res.body).to.include({ totalResults: 6, startIndex: 1, itemsPerPage: 6 });
    expect(res.body.Resources.map((u: { userName: string }) => u.userName)).to.include('Person3@Example.test');
    for (const u of res.body.Resources) expect(u.meta.location).to.equal(`${s.base}/Users/${u.id}`);
  });

  it("userName eq matches case-insensitively, and only in the token's org", async () => {
    const res = await filter('userName eq "person1@example.TEST"');
    expect(res.status).to.equal(200);
    expect(res.body.totalResults).to.equal(1);
    expect(res.body.Resources[0].userName).to.equal('Person1@Example.test');
    expect(res.body.Resources[0].meta.location.startsWith(s.base)).to.equal(true);
  });

  it('externalId eq matches case-exactly', async () => {
    expect((await filter('externalId eq "Ext-2"')).body.totalResults).to.equal(1);
    expect((await filter('externalId eq "ext-2"')).body.totalResults).to.equal(0);
  });

  it('attribute names, the operator and "and" are case-insensitive; the core schema URN prefix is accepted', async () => {
    for (const expr of [
      'USERNAME EQ "person2@example.test"',
      'username Eq "person2@example.test" AND externalid eq "Ext-2"',
      'urn:ietf:params:scim:schemas:core:2.0:User:userName eq "person2@example.test"',
      '  userName   eq   "person2@example.test"  ',
    ]) {
      const res = await filter(expr);
      expect(res.status, expr).to.equal(200);
      expect(res.body.totalResults, expr).to.equal(1);
    }
  });

  it('and combines terms: a contradiction matches nothing', async () => {
    expect((await filter('userName eq "person2@example.test" and externalId eq "Ext-3"')).body.totalResults).to.equal(0);
    expect((await filter('userName eq "person2@example.test" and userName eq "person3@example.test"')).body.totalResults).to.equal(0);
    expect((await filter('userName eq "person2@example.test" and userName eq "PERSON2@example.test"')).body.totalResults).to.equal(1);
  });

  it('200 with totalResults 0 and an empty Resources for no match', async () => {
    const res = await filter('userName eq "nobody@example.test"');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
  });

  it('string values may hold escaped quotes and backslashes', async () => {
    const created = await s.scim('POST', '/Users', userBody('quote"back\\slash@example.test'));
    expect(created.status).to.equal(201);
    const res = await filter('userName eq "quote\\"back\\\\slash@example.test"');
    expect(res.body.totalResults).to.equal(1);
    await s.scim('DELETE', `/Users/${created.body.id}`);
  });

  it('400 invalidFilter, naming the problem, for what stays unsupported or malformed — never an unfiltered list', async () => {
    const cases: [string, RegExp][] = [
      ['', /empty/],
      ['   ', /empty/],
      ['title eq "x"', /"title".*does not keep/],
      ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "x"', /only the core User schema/],
      ['name eq "x"', /"name" is complex/],
      ['emails[display eq "x"]', /"display"/],
      ['phoneNumbers[type eq "work"]', /only emails is multi-valued/],
      ['active gt true', /"gt" is not defined for the boolean/],
      ['active eq "yes"', /true or false/],
      ['meta.created co "2024"', /"co" is not defined for the datetime/],
      ['meta.lastModified gt "yesterday"', /datetime/],
      ['meta.lastModified gt "2025-01-31T12:00:00"', /datetime/],
      ['meta.created gt "0000-06-01T00:00:00Z"', /years 1 and 9999/],
      ['meta.created lt "0001-01-01T00:30:00+01:00"', /years 1 and 9999/],
      ['meta.created lt "9999-12-31T23:00:00-02:00"', /years 1 and 9999/],
      ['userName gt null', /not defined/],
      ['userName eq person1@example.test', /unexpected character "@"/],
      ['userName eq 1', /numeric/],
      ['userName eq "unterminated', /unterminated/],
      ['userName eq "a" and', /Expected an attribute/],
      ['userName eq "a" userName eq "b"', /Unexpected/],
      ['userName', /Expected an operator/],
      ['userName eq', /Expected a value/],
      ['userName like "a"', /Expected an operator/],
      ['"a" eq userName', /Expected an attribute/],
      ['userName eq "a" & externalId eq "b"', /unexpected character "&"/],
      ['not userName eq "a"', /"not" must be followed by "\("/],
      ['(userName eq "a"', /Expected "\)"/],
      ['emails[type eq "work"', /Expected "\]"/],
      ['emails[type eq "work"].display eq "x"', /"display"/],
      ['userName eq "nul\\u0000"', /NUL/],
      [`${'('.repeat(40)}userName pr${')'.repeat(40)}`, /nests deeper/],
      [`userName eq "${'x'.repeat(3000)}"`, /longer than 2048/],
    ];
    for (const [expr, detail] of cases) {
      const res = await filter(expr);
      expect(res.status, expr).to.equal(400);
      expect(res.body, expr).to.deep.include({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidFilter' });
      expect(res.body.detail, expr).to.match(detail);
    }
  });

  it('startIndex (1-based) and count page through the list in a stable order', async () => {
    const all = (await list('?startIndex=1&count=100')).body.Resources.map((u: { id: string }) => u.id);
    expect(all).to.have.length(6);
    const page = await list('?startIndex=2&count=2');
    expect(page.body).to.include({ totalResults: 6, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((u: { id: string }) => u.id)).to.deep.equal(all.slice(1, 3));
    const tail = await list('?startIndex=6&count=10');
    expect(tail.body.Resources.map((u: { id: string }) => u.id)).to.deep.equal(all.slice(5));
    const past = await list('?startIndex=50');
    expect(past.body).to.include({ totalResults: 6, itemsPerPage: 0 });
  });

  it('count=0 answers only totalResults; startIndex < 1 means 1 and a negative count means 0', async () => {
    const zero = await list('?count=0');
    expect(zero.body).to.include({ totalResults: 6, itemsPerPage: 0 });
    expect(zero.body.Resources).to.deep.equal([]);
    const low = await list('?startIndex=-4&count=1');
    expect(low.body).to.include({ startIndex: 1, itemsPerPage: 1 });
    const negative = await list('?count=-3');
    expect(negative.body.itemsPerPage).to.equal(0);
    const far = await list('?startIndex=999999999999999&count=999999999999999');
    expect(far.status).to.equal(200);
    expect(far.body).to.include({ totalResults: 6, itemsPerPage: 0 });
  });

  it('count is capped at 200, and a list without count answers at most 200', async () => {
    const big = await seedScimOrg(cp);
    await store.db.query(
      `INSERT INTO users (org_id, user_name, source) SELECT $1, 'bulk' || g || '@example.test', 'scim' FROM generate_series(1, 204) g`,
      [big.org.org_id],
    );
    for (const q of ['?count=100000', '']) {
      const res = await big.scim('GET', `/Users${q}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalResults: 205, itemsPerPage: 200 });
      expect(res.body.Resources).to.have.length(200);
    }
    const rest = await big.scim('GET', '/Users?startIndex=201&count=200');
    expect(rest.body.itemsPerPage).to.equal(5);
    const spc = await big.scim('GET', '/ServiceProviderConfig');
    expect(spc.body.filter).to.deep.equal({ supported: true, maxResults: 200 });
  });

  it('400 invalidValue for a startIndex or count that is not an integer', async () => {
    for (const q of ['?startIndex=abc', '?count=1.5', '?count=ten', '?startIndex=1e3']) {
      const res = await list(q);
      expect(res.status, q).to.equal(400);
      expect(res.body.scimType, q).to.equal('invalidValue');
    }
  });
});
