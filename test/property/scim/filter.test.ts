import { expect } from 'chai';
import fc from 'fast-check';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { seedScimOrg, USER_SCHEMA, type ScimOrg } from '../../support/scim.js';
import { arbitraries, evaluate, render, shortText, type ScimUserJson } from './filter-model.js';

/**
 * Random filters of the whole grammar, over random users, against the real
 * stores: the server never answers 5xx, never returns another
 * organization's user, and returns exactly the users the reference model
 * selects from the same resources.
 */
const RUNS = Number(process.env.SCIM_FILTER_RUNS) || 200;
const SEED = Number(process.env.SCIM_FILTER_SEED) || Date.now();
const USERS = 10;
const SEARCH_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

const userArb = (i: number) =>
  fc.record({
    schemas: fc.constant([USER_SCHEMA]),
    userName: shortText.map((t) => `u${i}${t}`),
    externalId: fc.option(shortText, { nil: undefined }),
    displayName: fc.option(shortText, { nil: undefined }),
    name: fc.option(fc.record({ givenName: shortText, familyName: shortText, formatted: shortText }, { requiredKeys: [] }), { nil: undefined }),
    emails: fc.array(
      fc.record({
        value: shortText.map((t) => `e${t}`),
        type: fc.option(shortText, { nil: undefined }),
        primary: fc.option(fc.boolean(), { nil: undefined }),
      }),
      { maxLength: 3 },
    ),
    active: fc.boolean(),
  });

const CAPPED = /more than \d+ comparisons|compares emails more than \d+ times/;
describeEachStore(`SCIM filter properties: agree with a reference model (seed ${SEED})`, (store) => {
  let cp: TestControlPlane;
  let a: ScimOrg;
  let b: ScimOrg;
  let users: ScimUserJson[];
  let bIds: Set<string>;

  before(async function () {
    this.timeout(60_000);
    cp = await startTestControlPlane(store.db);
    a = await seedScimOrg(cp);
    b = await seedScimOrg(cp);
    bIds = new Set();
    for (let i = 0; i < USERS; i++) {
      const [body] = fc.sample(userArb(i), { numRuns: 1, seed: SEED + i });
      const created = await a.scim('POST', '/Users', body);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      // The same user in another organization: a filter that leaks would return it.
      const twin = await b.scim('POST', '/Users', body);
      bIds.add(twin.body.id);
    }
    // A user without emails is answered without the attribute (unassigned); the model reads that as [].
    users = (await a.scim('GET', '/Users?count=200')).body.Resources.map((u: ScimUserJson) => ({ ...u, emails: u.emails ?? [] }));
    expect(users).to.have.length(USERS + 1);
  });
  after(() => cp.close());

  it("GET /Users?filter= and POST /Users/.search return exactly the model's users, never a 5xx or another org's", async function () {
    this.timeout(300_000);
    const texts = users.flatMap((u) => [
      u.userName,
      u.externalId,
      u.displayName,
      u.name?.givenName,
      u.name?.familyName,
      u.name?.formatted,
      ...u.emails.flatMap((e) => [e.value, e.type]),
    ]);
    const pool = {
      texts: [...new Set(texts.filter((t): t is string => t !== undefined && t !== ''))],
      dates: users.flatMap((u) => [u.meta.created, u.meta.lastModified]),
      ids: [...users.map((u) => u.id), [...bIds][0]!],
    };
    const { expr, spelling } = arbitraries(pool);
    await fc.assert(
      fc.asyncProperty(expr, spelling, fc.boolean(), async (x, s, viaSearch) => {
        const filter = render(x, s);
        const res = viaSearch
          ? await a.scim('POST', '/Users/.search', { schemas: [SEARCH_REQUEST], filter, count: 200 })
          : await a.scim('GET', `/Users?count=200&filter=${encodeURIComponent(filter)}`);
        const what = `filter=${filter} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
        if (filter.length > 2048) {
          expect(res.status, what).to.equal(400);
          expect(res.body.scimType, what).to.equal('invalidFilter');
          return;
        }
        // Past the comparison caps (docs/scim.md, limits) a well-formed filter is refused, in SCIM's shape.
        if (res.status === 400 && CAPPED.test(String(res.body.detail))) {
          expect(res.body.scimType, what).to.equal('invalidFilter');
          return;
        }
        expect(res.status, what).to.equal(200);
        const got = (res.body.Resources as ScimUserJson[]).map((u) => u.id).sort();
        for (const id of got) expect(bIds.has(id), what).to.equal(false);
        const expected = users
          .filter((u) => evaluate(u, x))
          .map((u) => u.id)
          .sort();
        expect(got, what).to.deep.equal(expected);
        expect(res.body.totalResults, what).to.equal(expected.length);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
