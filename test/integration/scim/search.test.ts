import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, seedScimOrg, USER_SCHEMA, userBody, type ScimOrg } from '../../support/scim.js';

const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

describeEachStore('SCIM: POST /Users/.search (RFC 7644 §3.4.3)', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  let other: ScimOrg;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
    other = await seedScimOrg(cp);
    for (let i = 1; i <= 4; i++) {
      expect((await s.scim('POST', '/Users', userBody(`searched${i}@example.test`, { externalId: `x${i}`, active: i % 2 === 1 }))).status).to.equal(
        201,
      );
      await other.scim('POST', '/Users', userBody(`searched${i}@example.test`));
    }
  });
  after(() => cp.close());

  it('filter, attributes, startIndex and count in the body; answers a ListResponse of this org only', async () => {
    const res = await s.scim('POST', '/Users/.search', {
      schemas: [SEARCH],
      filter: 'userName sw "searched" and active eq true',
      attributes: ['userName', 'externalId'],
      startIndex: 1,
      count: 10,
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.include('application/scim+json');
    expect(res.body).to.include({ totalResults: 2, startIndex: 1, itemsPerPage: 2 });
    expect(res.body.schemas).to.deep.equal([LIST]);
    for (const u of res.body.Resources) {
      expect(Object.keys(u).sort()).to.deep.equal(['externalId', 'id', 'schemas', 'userName']);
      expect(u.schemas).to.deep.equal([USER_SCHEMA]);
    }
    expect(res.body.Resources.map((u: { externalId: string }) => u.externalId)).to.deep.equal(['x1', 'x3']);
  });

  it('pages with startIndex/count (numbers or integer strings), excludedAttributes, and works at the root /.search', async () => {
    const page = await s.scim('POST', '/Users/.search', {
      filter: 'userName sw "searched"',
      startIndex: '2',
      count: 2,
      excludedAttributes: ['emails', 'meta'],
    });
    expect(page.body).to.include({ totalResults: 4, startIndex: 2, itemsPerPage: 2 });
    for (const u of page.body.Resources) expect(u).not.to.have.any.keys('emails', 'meta');
    const root = await s.scim('POST', '/.search', { filter: 'externalId eq "x4"' });
    expect(root.status).to.equal(200);
    expect(root.body.Resources.map((u: { userName: string }) => u.userName)).to.deep.equal(['searched4@example.test']);
    const everyone = await s.scim('POST', '/Users/.search', { sortBy: 'userName', sortOrder: 'descending' });
    expect(everyone.body.totalResults, 'no filter: every user of the org, the owner too; sortBy is ignored').to.equal(5);
  });

  it('400 with a scimType for a malformed request, never a list', async () => {
    const cases: [unknown, string][] = [
      ['[]', 'invalidSyntax'],
      ['not json', 'invalidSyntax'],
      [{ filter: 'userName zz "a"' }, 'invalidFilter'],
      [{ filter: 42 }, 'invalidFilter'],
      [{ count: 'ten' }, 'invalidValue'],
      [{ startIndex: { n: 1 } }, 'invalidValue'],
      [{ attributes: [1] }, 'invalidValue'],
      [{ attributes: ['emails[type eq "work"]'] }, 'invalidValue'],
    ];
    for (const [body, scimType] of cases) {
      const res = await s.scim('POST', '/Users/.search', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body, JSON.stringify(body)).to.deep.include({ schemas: [ERROR_SCHEMA], scimType });
    }
  });

  it('/ServiceProviderConfig says filter is supported with its page cap; sort, bulk and etag are not', async () => {
    const spc = await s.scim('GET', '/ServiceProviderConfig');
    expect(spc.body).to.deep.include({
      patch: { supported: true },
      filter: { supported: true, maxResults: 200 },
      sort: { supported: false },
      etag: { supported: false },
      changePassword: { supported: false },
    });
    expect(spc.body.bulk.supported).to.equal(false);
  });
});
