import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, seedScimOrg, type ScimOrg } from '../../support/scim.js';
import { MAX_COMPARISONS, MAX_EMAIL_COMPARISONS } from '../../../control-plane/services/scim/filter.js';

const emailTerms = (n: number) => Array.from({ length: n }, (_, i) => `emails[value co "x${i}"]`).join(' or ');
const search = (s: ScimOrg, filter: string) => s.scim('POST', '/Users/.search', { filter });

/** Security finding 5: a SCIM filter must not be able to hold the shared store; finding 11's SCIM half: requests per org are limited. */
describeEachStore('SCIM: abuse limits', (store) => {
  describe('filter size and statement time', () => {
    let cp: TestControlPlane;
    let s: ScimOrg;
    before(async () => {
      cp = await startTestControlPlane(store.db, { env: { SCIM_SEARCH_TIMEOUT_MS: '1' } });
      s = await seedScimOrg(cp);
    });
    after(() => cp.close());

    it(`more than ${MAX_EMAIL_COMPARISONS} email comparisons (the probe's 50) is 400 invalidFilter before any query`, async () => {
      const res = await search(s, emailTerms(50));
      expect(res.status).to.equal(400);
      expect(res.body.schemas).to.deep.equal([ERROR_SCHEMA]);
      expect(res.body.scimType).to.equal('invalidFilter');
      expect(res.body.detail).to.match(/compares emails more than 8 times/);
    });

    it(`more than ${MAX_COMPARISONS} comparisons in all is 400 invalidFilter`, async () => {
      const filter = Array.from({ length: MAX_COMPARISONS + 1 }, (_, i) => `userName eq "u${i}"`).join(' or ');
      const res = await s.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`);
      expect(res.status).to.equal(400);
      expect(res.body.scimType).to.equal('invalidFilter');
      expect(res.body.detail).to.match(/more than 24 comparisons/);
    });

    // PGlite has no statement timer (the caps above bound it, docs/security.md): this one is PostgreSQL's alone.
    if (store.name === 'postgres') {
      it('a search that runs past SCIM_SEARCH_TIMEOUT_MS is cut off on PostgreSQL: 400 tooMany, and the next request works', async function () {
        this.timeout(60_000);
        // Enough users that eight substring scans of every email list take far more than 1 ms.
        await store.db.query(
          `INSERT INTO users (org_id, user_name, emails, active, source, created_at, updated_at)
           SELECT $1, 'bulk' || g || '@example.test', jsonb_build_array(jsonb_build_object('value', 'bulk' || g || '@example.test')), true, 'scim', now(), now()
             FROM generate_series(1, 50000) g`,
          [s.org.org_id],
        );
        const res = await search(s, emailTerms(MAX_EMAIL_COMPARISONS));
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.scimType).to.equal('tooMany');
        expect(res.body.detail).to.match(/took more than 1 ms/);
        // The cut-off left no connection in a bad state (a read outside the search's time limit, so it cannot itself time out).
        expect((await s.scim('GET', `/Users/${s.org.owner_user_id}`)).status).to.equal(200);
      });
    }
  });

  describe('requests per organization', () => {
    let cp: TestControlPlane;
    let a: ScimOrg;
    let b: ScimOrg;
    before(async () => {
      cp = await startTestControlPlane(store.db, { env: { SCIM_RATE_LIMIT_PER_MINUTE: '3' } });
      a = await seedScimOrg(cp);
      b = await seedScimOrg(cp);
    });
    after(() => cp.close());

    it('past the limit: 429 in SCIM error shape with retry-after; another org is unaffected', async () => {
      for (let i = 0; i < 3; i++) expect((await a.scim('GET', '/Users')).status).to.equal(200);
      const refused = await a.scim('GET', '/Users');
      expect(refused.status).to.equal(429);
      expect(refused.body.schemas).to.deep.equal([ERROR_SCHEMA]);
      expect(refused.body.status).to.equal('429');
      expect(refused.body.detail).to.match(/Too many SCIM requests/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect((await b.scim('GET', '/Users')).status).to.equal(200);
    });

    it('requests with an invalid token are refused before they count against an org', async () => {
      for (let i = 0; i < 5; i++) expect((await b.scim('GET', '/Users', undefined, { token: 'tgp_nope' })).status).to.equal(401);
      // b made one request above: two more fit in its three.
      expect((await b.scim('GET', '/Users')).status).to.equal(200);
      expect((await b.scim('GET', '/Users')).status).to.equal(200);
      expect((await b.scim('GET', '/Users')).status).to.equal(429);
    });
  });
});
