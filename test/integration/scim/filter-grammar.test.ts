import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { patchBody, seedScimOrg, USER_SCHEMA, type ScimOrg } from '../../support/scim.js';
import { parseFilter } from '../../../control-plane/services/scim/filter.js';
import { userFilterSql } from '../../../control-plane/stores/users-filter.js';

const ALICE = {
  schemas: [USER_SCHEMA],
  userName: 'Alice.Smith@Example.test',
  externalId: 'EXT-A',
  displayName: 'Alice S',
  name: { givenName: 'Alice', familyName: 'Smith' },
  emails: [
    { value: 'alice@work.test', type: 'work', primary: true },
    { value: 'alice@home.test', type: 'home' },
  ],
  active: true,
};
const BOB = {
  schemas: [USER_SCHEMA],
  userName: 'bob.jones@example.test',
  externalId: 'ext-b',
  name: { givenName: 'Bob', familyName: 'Jones', formatted: 'Robert Jones' },
  emails: [{ value: 'bob@home.test', type: 'home' }],
  active: false,
};
const CAROL = { schemas: [USER_SCHEMA], userName: 'carol@other.test', displayName: 'Carol', active: true };

describeEachStore('SCIM: the RFC 7644 filter grammar on GET /Users', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  let other: ScimOrg;
  let owner: string;
  const created: Record<string, { id: string; meta: { created: string; lastModified: string } }> = {};

  /** userNames matched by `expr`, sorted; every answer must be this org's. */
  async function matched(expr: string): Promise<string[]> {
    const res = await s.scim('GET', `/Users?filter=${encodeURIComponent(expr)}`);
    expect(res.status, `${expr} → ${JSON.stringify(res.body)}`).to.equal(200);
    expect(res.body.totalResults, expr).to.equal(res.body.Resources.length);
    for (const u of res.body.Resources) expect(u.meta.location.startsWith(`${s.base}/Users/`), expr).to.equal(true);
    return res.body.Resources.map((u: { userName: string }) => u.userName).sort();
  }
  const expectMatch = async (expr: string, userNames: string[]) => expect(await matched(expr), expr).to.deep.equal([...userNames].sort());

  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
    other = await seedScimOrg(cp);
    for (const [key, body] of Object.entries({ alice: ALICE, bob: BOB, carol: CAROL })) {
      const res = await s.scim('POST', '/Users', body);
      expect(res.status).to.equal(201);
      created[key] = res.body;
      // The same people in another organization: a filter must never reach them.
      expect((await other.scim('POST', '/Users', body)).status).to.equal(201);
    }
    owner = (await s.scim('GET', `/Users?filter=${encodeURIComponent('userName sw "owner@"')}`)).body.Resources[0].userName;
  });
  after(() => cp.close());

  it('string operators eq ne co sw ew pr on userName, case-insensitively', async () => {
    await expectMatch('userName eq "alice.smith@example.TEST"', [ALICE.userName]);
    await expectMatch('userName ne "alice.smith@example.test"', [BOB.userName, CAROL.userName, owner]);
    await expectMatch('userName co "JONES"', [BOB.userName]);
    await expectMatch('userName sw "ALICE."', [ALICE.userName]);
    await expectMatch('userName ew "@EXAMPLE.test"', [ALICE.userName, BOB.userName]);
    await expectMatch('userName pr', [ALICE.userName, BOB.userName, CAROL.userName, owner]);
    await expectMatch('userName co "%"', []);
    await expectMatch('userName sw "_"', []);
  });

  it('gt ge lt le compare strings in code-point order, case-insensitively for userName', async () => {
    await expectMatch('userName gt "BOB"', [BOB.userName, CAROL.userName, owner]);
    await expectMatch('userName ge "bob.jones@example.test"', [BOB.userName, CAROL.userName, owner]);
    await expectMatch('userName lt "bob.jones@example.test"', [ALICE.userName]);
    await expectMatch('userName le "BOB.JONES@example.test"', [ALICE.userName, BOB.userName]);
  });

  it('id and externalId are case-exact', async () => {
    await expectMatch(`id eq "${created.alice!.id}"`, [ALICE.userName]);
    await expectMatch(`id eq "${created.alice!.id.toUpperCase()}"`, []);
    await expectMatch(`id sw "${created.bob!.id.slice(0, 8)}"`, [BOB.userName]);
    await expectMatch('externalId eq "EXT-A"', [ALICE.userName]);
    await expectMatch('externalId eq "ext-a"', []);
    await expectMatch('externalId co "ext"', [BOB.userName]);
  });

  it('and binds tighter than or; not and parentheses regroup', async () => {
    await expectMatch('userName sw "bob" or userName sw "carol" and active eq false', [BOB.userName]);
    await expectMatch('(userName sw "bob" or userName sw "carol") and active eq true', [CAROL.userName]);
    await expectMatch('not (userName sw "bob" or userName sw "carol")', [ALICE.userName, owner]);
    await expectMatch('not (not (active eq false))', [BOB.userName]);
    await expectMatch('((userName sw "alice")) or (emails[type eq "home"] and not (active eq true))', [ALICE.userName, BOB.userName]);
  });

  it('value paths: emails[…], emails[…].value, emails.value, emails with a bare operator', async () => {
    await expectMatch('emails[type eq "work" and primary eq true]', [ALICE.userName]);
    await expectMatch('emails[type eq "home"].value eq "BOB@home.test"', [BOB.userName]);
    await expectMatch('emails[type eq "work"].value eq "alice@home.test"', []);
    await expectMatch('emails[type eq "home" or type eq "work"]', [ALICE.userName, BOB.userName]);
    await expectMatch('emails[not (type eq "home")]', [ALICE.userName, owner]);
    await expectMatch('emails.value eq "ALICE@home.test"', [ALICE.userName]);
    await expectMatch('emails co "@home."', [ALICE.userName, BOB.userName]);
    await expectMatch('emails.primary eq true', [ALICE.userName, owner]);
    await expectMatch('emails pr', [ALICE.userName, BOB.userName, owner]);
    await expectMatch('not (emails pr)', [CAROL.userName]);
  });

  it('sub-attributes of name, with name.formatted as sent or derived; displayName', async () => {
    await expectMatch('name.familyName eq "smith"', [ALICE.userName]);
    await expectMatch('name.formatted eq "Robert Jones"', [BOB.userName]);
    await expectMatch('name.formatted eq "alice smith"', [ALICE.userName]);
    await expectMatch('name.givenName sw "b"', [BOB.userName]);
    await expectMatch('name pr', [ALICE.userName, BOB.userName]);
    await expectMatch('displayName eq "carol"', [CAROL.userName]);
    await expectMatch('displayName pr', [ALICE.userName, CAROL.userName]);
  });

  it('active eq true / false, and eq null / ne null as absence and presence', async () => {
    await expectMatch('active eq true', [ALICE.userName, CAROL.userName, owner]);
    await expectMatch('active ne true', [BOB.userName]);
    await expectMatch('externalId eq null', [CAROL.userName, owner]);
    await expectMatch('externalId ne null', [ALICE.userName, BOB.userName]);
    await expectMatch('not (externalId eq "EXT-A")', [BOB.userName, CAROL.userName, owner]);
  });

  it('meta.created and meta.lastModified compare as datetimes, in any offset', async () => {
    const aliceCreated = created.alice!.meta.created;
    await expectMatch(`meta.created eq "${aliceCreated}"`, [ALICE.userName]);
    await expectMatch(`meta.created gt "${aliceCreated}"`, [BOB.userName, CAROL.userName]);
    await expectMatch(`meta.created le "${aliceCreated}"`, [ALICE.userName, owner]);
    const shifted = new Date(Date.parse(created.bob!.meta.created) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    await expectMatch(`meta.created eq "${shifted}"`, [BOB.userName]);
    const patched = await s.scim('PATCH', `/Users/${created.carol!.id}`, patchBody({ op: 'replace', path: 'displayName', value: 'Carol C' }));
    await expectMatch(`meta.lastModified ge "${patched.body.meta.lastModified}"`, [CAROL.userName]);
    await expectMatch('meta.created gt "2000-01-01T00:00:00Z" and meta.created lt "2999-01-01T00:00:00.000Z"', [
      ALICE.userName,
      BOB.userName,
      CAROL.userName,
      owner,
    ]);
  });

  it('attribute names, operators and keywords are case-insensitive; the core URN prefix is accepted anywhere', async () => {
    await expectMatch('URN:IETF:PARAMS:SCIM:SCHEMAS:CORE:2.0:USER:NAME.FAMILYNAME EQ "Smith" OR EMAILS[TYPE Eq "home" AnD Value SW "bob"]', [
      ALICE.userName,
      BOB.userName,
    ]);
    await expectMatch('urn:ietf:params:scim:schemas:core:2.0:User:emails[type eq "work"].VALUE co "alice"', [ALICE.userName]);
    await expectMatch('NOT (Active EQ TRUE)', [BOB.userName]);
  });

  it('values are bound, never spliced into SQL', async () => {
    await expectMatch(`userName eq "x' OR '1'='1"`, []);
    await expectMatch(`displayName co "'); DROP TABLE users; --"`, []);
    const params: unknown[] = [];
    const sql = userFilterSql(parseFilter(`userName eq "x' OR 1=1 --" or emails[value co "';--"] or meta.created gt "2020-01-01T00:00:00Z"`), params);
    expect(sql).not.to.include("'1'");
    expect(sql).not.to.include(';--');
    expect(params).to.deep.equal(["x' OR 1=1 --", "%';--%", '2020-01-01T00:00:00.000Z']);
  });

  it('userName eq stays on the unique index; userName sw and emails value equality can use their indexes', async () => {
    // An organization big enough for the planner to prefer a narrow index when one fits.
    const big = await seedScimOrg(cp);
    await store.db.query(
      `INSERT INTO users (org_id, user_name, emails, source)
       SELECT $1, 'bulk' || g || '@example.test', jsonb_build_array(jsonb_build_object('value', 'bulk' || g || '@example.test', 'type', 'work')), 'scim'
       FROM generate_series(1, 5000) g`,
      [big.org.org_id],
    );
    await store.db.query('ANALYZE users');
    const plan = async (expr: string) => {
      const params: unknown[] = [big.org.org_id];
      const where = userFilterSql(parseFilter(expr), params);
      return store.db.transaction(async (tx) => {
        // Tiny tables make a sequential scan cheapest; this asks whether an index can serve the filter at all.
        await tx.query('SET LOCAL enable_seqscan = off');
        const rows = await tx.query<Record<string, string>>(`EXPLAIN SELECT id FROM users WHERE org_id = $1 AND ${where}`, params);
        return rows.map((r) => Object.values(r)[0]).join('\n');
      });
    };
    // Both indexes are on (org_id, lower(user_name)) and serve equality; either is a lookup, not a scan.
    expect(await plan('userName eq "bulk42@example.test"')).to.match(/Index (Only )?Scan using users_org_user_name_(key|prefix_idx)/);
    expect(await plan('userName sw "bulk42"')).to.include('users_org_user_name_prefix_idx');
    expect(await plan('emails[type eq "work"].value eq "Bulk42@example.test"')).to.include('users_email_values_idx');
    expect(await plan('emails.value eq "bulk42@example.test"')).to.include('users_email_values_idx');
  });
});
