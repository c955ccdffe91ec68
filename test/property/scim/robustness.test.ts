import { expect } from 'chai';
import fc from 'fast-check';
import { SCIM_TYPES } from '../../../control-plane/scim/errors.js';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, seedScimOrg, userBody, type ScimAnswer, type ScimOrg, PATCH_PATH_SAMPLES } from '../../support/scim.js';
import type { Database } from '../../../control-plane/db/database.js';

/**
 * Whatever a connector (or anything holding a token) sends, the answer is a
 * well-formed SCIM success or error, never a 5xx, and nothing of another
 * organization is returned or changed.
 */
const USER_SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
const RUNS = Number(process.env.SCIM_PROPERTY_RUNS) || 120;

function expectWellFormed(res: ScimAnswer, allowed: number[], what: string): void {
  expect(res.status, `${what} → ${res.status} ${JSON.stringify(res.body)}`).to.be.oneOf(allowed);
  if (res.status === 204) return;
  expect(res.headers.get('content-type'), what).to.include('application/scim+json');
  expect(res.body, what).to.be.an('object');
  if (res.status >= 400) {
    expect(res.body.schemas, what).to.deep.equal([ERROR_SCHEMA]);
    expect(res.body.status, what).to.equal(String(res.status));
    expect(res.body.detail, what).to.be.a('string');
    if ('scimType' in res.body) expect(res.body.scimType, what).to.be.oneOf([...SCIM_TYPES]);
  } else {
    expect(res.body.schemas, what).to.be.an('array');
  }
}

async function snapshot(db: Database, orgId: string): Promise<string> {
  const users = await db.query('SELECT * FROM users WHERE org_id = $1 ORDER BY id', [orgId]);
  const memberships = await db.query('SELECT * FROM memberships WHERE org_id = $1 ORDER BY user_id', [orgId]);
  const sessions = await db.query('SELECT id, revoked_at FROM console_sessions WHERE org_id = $1 ORDER BY id', [orgId]);
  return JSON.stringify({ users, memberships, sessions });
}

/** Strings that have broken SCIM servers: NUL, lone surrogates, index-sized and oversized values. */
const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '💥'.repeat(128), '💥'.repeat(129), 'x'.repeat(256), 'x'.repeat(3000), ' ', ''),
);

const attrName = fc.constantFrom(
  'userName',
  'USERNAME',
  'externalId',
  'externalid',
  'urn:ietf:params:scim:schemas:core:2.0:User:userName',
  'displayName',
  'emails.value',
  'emails[type eq "work"].value',
  'id',
  'active',
  'name.givenName',
  'meta.created',
  'META.LASTMODIFIED',
  'emails[type eq "work" and primary eq true].value',
  'name.formatted',
  'emails.primary',
  'name',
);
const filterOp = fc.constantFrom('eq', 'EQ', 'Eq', 'ne', 'co', 'sw', 'ew', 'pr', 'gt', 'ge', 'lt', 'le', '==', '');
const literal = fc.oneof(
  nasty.map((s) => JSON.stringify(s)),
  fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
  fc.constantFrom('true', 'false', 'null', '42', '"unterminated', '"a\\"b"', 'bare'),
  // Datetimes at and past the edges of what the database accepts.
  fc.constantFrom(
    '"0000-01-01T00:00:00Z"',
    '"0001-01-01T00:00:00+14:00"',
    '"9999-12-31T23:59:59-12:00"',
    '"2025-02-30T00:00:00Z"',
    '"2025-01-01T00:00:00.123456789Z"',
  ),
  fc.date({ min: new Date(-62198755200000), max: new Date(253402300799999), noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString())),
);
const term = fc.tuple(attrName, filterOp, literal).map(([a, o, v]) => `${a} ${o} ${v}`);
const filterText = fc.oneof(
  fc
    .array(term, { minLength: 1, maxLength: 3 })
    .chain((terms) => fc.constantFrom(' and ', ' AND ', ' or ', ' ', ') and (').map((j) => terms.join(j))),
  term.map((t) => `not (${t})`),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ maxLength: 80 }),
);

const pathText = fc.oneof(fc.constantFrom(...PATCH_PATH_SAMPLES), fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
const opText = fc.constantFrom('add', 'replace', 'remove', 'Add', 'Replace', 'REMOVE', 'merge', '', 'copy');
const patchValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    true,
    false,
    'True',
    'False',
    null,
    '',
    'x@example.test',
    [{ value: 'a@b.test', type: 'work' }],
    { active: false },
    { 'name.givenName': 'G' },
  ),
  nasty,
);
const operation = fc.record({ op: opText, path: pathText, value: patchValue }, { requiredKeys: [] });
const goodPath = fc.constantFrom(
  'active',
  'externalId',
  'displayName',
  'name.givenName',
  'name.familyName',
  'name',
  'emails',
  'emails[type eq "work"].value',
  'emails[type eq "work"].type',
  'emails[type eq "work"]',
  'userName',
);
const patchDocument = fc.oneof(
  fc.tuple(fc.constantFrom('add', 'replace', 'Replace'), goodPath, fc.oneof(nasty, patchValue)).map(([op, path, value]) => ({
    Operations: [{ op, path, value }],
  })),
  fc.tuple(goodPath, fc.oneof(nasty, patchValue)).map(([path, value]) => ({ Operations: [{ op: 'replace', value: { [path]: value } }] })),
  fc.record({ schemas: fc.constant(['urn:ietf:params:scim:api:messages:2.0:PatchOp']), Operations: fc.array(operation, { maxLength: 6 }) }),
  fc.record({ Operations: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.array(operation, { maxLength: 3 })) }),
  fc.jsonValue({ maxDepth: 3 }),
);

const userish = fc.record(
  {
    schemas: fc.constant(['urn:ietf:params:scim:schemas:core:2.0:User']),
    userName: fc.oneof(nasty, fc.emailAddress(), fc.jsonValue({ maxDepth: 1 })),
    externalId: fc.oneof(nasty, fc.constant(null), fc.integer()),
    active: fc.oneof(fc.boolean(), fc.constantFrom('True', 'False', 'yes', null, 0)),
    name: fc.oneof(
      fc.record({ givenName: fc.jsonValue({ maxDepth: 1 }), familyName: fc.string() }, { requiredKeys: [] }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    displayName: fc.oneof(nasty, fc.jsonValue({ maxDepth: 1 })),
    emails: fc.oneof(
      fc.array(
        fc.record(
          { value: fc.oneof(nasty, fc.jsonValue({ maxDepth: 1 })), type: nasty, primary: fc.jsonValue({ maxDepth: 1 }) },
          { requiredKeys: [] },
        ),
        { maxLength: 25 },
      ),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    password: fc.string(),
    groups: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
/** A valid User with one attribute swapped for a hostile value: reaches the database, unlike most random bodies. */
let serial = 0;
const oneBadField = fc
  .tuple(
    fc.constantFrom('userName', 'externalId', 'displayName', 'givenName', 'familyName', 'emailValue', 'emailType', 'active'),
    fc.oneof(nasty, fc.jsonValue({ maxDepth: 1 })),
  )
  .map(([field, value]) => {
    serial += 1;
    const body: Record<string, unknown> = {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `prop-${process.pid}-${serial}@example.test`,
      name: { givenName: 'P', familyName: 'Q' },
      emails: [{ value: `prop-${serial}@example.test`, type: 'work' }],
    };
    if (field === 'givenName' || field === 'familyName') body.name = { [field]: value };
    else if (field === 'emailValue') body.emails = [{ value, type: 'work' }];
    else if (field === 'emailType') body.emails = [{ value: `t-${serial}@example.test`, type: value }];
    else body[field] = value;
    return body;
  });
const anyBody = fc.oneof(oneBadField, oneBadField, userish, fc.jsonValue({ maxDepth: 4 }), fc.string({ maxLength: 60 }));

describeEachStore('SCIM properties: never a 5xx, never another org', (store) => {
  let cp: TestControlPlane;
  let a: ScimOrg;
  let b: ScimOrg;
  let aIds: string[];
  let bIds: string[];
  let bBefore: string;
  const bSecrets: string[] = [];

  before(async function () {
    this.timeout(60_000);
    cp = await startTestControlPlane(store.db);
    a = await seedScimOrg(cp);
    b = await seedScimOrg(cp);
    aIds = [];
    bIds = [];
    for (let i = 0; i < 3; i++) {
      const ra = await a.scim('POST', '/Users', userBody(`a-user-${i}@example.test`, { externalId: `shared-ext-${i}` }));
      aIds.push(ra.body.id);
      const name = `b-only-${i}-${Date.now()}@example.test`;
      const rb = await b.scim('POST', '/Users', userBody(name, { externalId: `shared-ext-${i}` }));
      bIds.push(rb.body.id);
      bSecrets.push(name, rb.body.id);
    }
    bBefore = await snapshot(store.db, b.org.org_id);
  });
  after(() => cp.close());

  function expectNothingOfB(res: ScimAnswer, what: string): void {
    const text = JSON.stringify(res.body ?? '');
    for (const secret of bSecrets) expect(text, what).not.to.include(secret);
  }

  const targetId = () =>
    fc.oneof(
      fc.constantFrom(...aIds),
      fc.constantFrom(...bIds),
      fc.uuid(),
      // "." and ".." are dot segments the HTTP client folds away before sending.
      fc.string({ maxLength: 50 }).filter((s) => s.length > 0 && s !== '.' && s !== '..'),
    );

  it("random filters on GET /Users answer 200 or 400 invalidFilter/invalidValue, with only this org's users", async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(
        filterText,
        fc.option(fc.integer({ min: -5, max: 500 })),
        fc.option(fc.integer({ min: -5, max: 500 })),
        async (filter, startIndex, count) => {
          const q = new URLSearchParams({ filter });
          if (startIndex !== null) q.set('startIndex', String(startIndex));
          if (count !== null) q.set('count', String(count));
          const res = await a.scim('GET', `/Users?${q.toString()}`);
          const what = `filter=${JSON.stringify(filter)}`;
          expectWellFormed(res, [200, 400], what);
          if (res.status === 400) expect(res.body.scimType, what).to.be.oneOf(['invalidFilter', 'invalidValue']);
          else for (const u of res.body.Resources) expect(u.meta.location.startsWith(`${a.base}/Users/`), what).to.equal(true);
          expectNothingOfB(res, what);
        },
      ),
      { numRuns: RUNS },
    );
    expect(await snapshot(store.db, b.org.org_id)).to.equal(bBefore);
  });

  it('random attributes / excludedAttributes answer 200 with id and schemas always, or 400 invalidValue', async function () {
    this.timeout(120_000);
    const name = fc.oneof(
      fc.constantFrom(
        'id',
        'schemas',
        'userName',
        'name',
        'name.givenName',
        'NAME.FAMILYNAME',
        'emails',
        'emails.value',
        'emails.type',
        'meta',
        'meta.created',
        'active',
        'externalId',
        'title',
        'urn:ietf:params:scim:schemas:core:2.0:User:displayName',
        'emails[type eq "work"]',
        'a.b.c',
        '',
      ),
      fc.string({ maxLength: 12 }),
    );
    const list = fc.array(name, { maxLength: 5 }).map((n) => n.join(','));
    await fc.assert(
      fc.asyncProperty(fc.option(list), fc.option(list), fc.boolean(), async (attributes, excluded, single) => {
        const q = new URLSearchParams();
        if (attributes !== null) q.set('attributes', attributes);
        if (excluded !== null) q.set('excludedAttributes', excluded);
        const res = await a.scim('GET', `/Users${single ? `/${aIds[0]}` : ''}?${q.toString()}`);
        const what = `GET ${single ? 'one' : 'list'} ?${q.toString()}`;
        expectWellFormed(res, [200, 400], what);
        if (res.status === 400) expect(res.body.scimType, what).to.equal('invalidValue');
        else for (const u of single ? [res.body] : res.body.Resources) expect(u, what).to.include.keys('id', 'schemas', 'userName');
        expectNothingOfB(res, what);
      }),
      { numRuns: RUNS },
    );
  });

  it('random PATCH documents answer 200, 400 or 404, never touch another org, and a 400 changes nothing', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(targetId(), patchDocument, async (id, doc) => {
        const before = aIds.includes(id) ? await snapshot(store.db, a.org.org_id) : undefined;
        const res = await a.scim('PATCH', `/Users/${encodeURIComponent(id)}`, doc);
        const what = `PATCH ${id} ${JSON.stringify(doc)}`;
        expectWellFormed(res, [200, 400, 404], what);
        if (bIds.includes(id) || !aIds.includes(id)) expect(res.status, what).to.be.oneOf([400, 404]);
        if (res.status === 400 && before !== undefined) expect(await snapshot(store.db, a.org.org_id), what).to.equal(before);
        expectNothingOfB(res, what);
      }),
      { numRuns: RUNS },
    );
    expect(await snapshot(store.db, b.org.org_id)).to.equal(bBefore);
  });

  it('random JSON bodies to POST /Users answer 201, 400 or 409', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(anyBody, async (body) => {
        const res = await a.scim('POST', '/Users', typeof body === 'string' ? body : JSON.stringify(body));
        const what = `POST ${JSON.stringify(body)}`;
        expectWellFormed(res, [201, 400, 409], what);
        if (res.status === 201) {
          expect(res.body.meta.location, what).to.equal(`${a.base}/Users/${res.body.id}`);
          expect(res.body, what).not.to.have.any.keys('password', 'groups');
        }
        expectNothingOfB(res, what);
      }),
      { numRuns: RUNS },
    );
    expect(await snapshot(store.db, b.org.org_id)).to.equal(bBefore);
  });

  it('random JSON bodies to PUT /Users/{id} answer 200, 400 or 404, and keep userName', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(targetId(), anyBody, async (id, body) => {
        const res = await a.scim('PUT', `/Users/${encodeURIComponent(id)}`, typeof body === 'string' ? body : JSON.stringify(body));
        const what = `PUT ${id} ${JSON.stringify(body)}`;
        expectWellFormed(res, [200, 400, 404], what);
        if (!aIds.includes(id)) expect(res.status, what).to.be.oneOf([400, 404]);
        if (res.status === 200) expect(res.body.userName, what).to.equal(`a-user-${aIds.indexOf(id)}@example.test`);
        expectNothingOfB(res, what);
      }),
      { numRuns: RUNS },
    );
    expect(await snapshot(store.db, b.org.org_id)).to.equal(bBefore);
  });

  it('random methods and paths under the base answer a well-formed SCIM answer, never a 5xx', async function () {
    this.timeout(120_000);
    const segment = fc.oneof(
      fc.constantFrom(
        'Users',
        'users',
        'Groups',
        'Schemas',
        'ResourceTypes',
        'ServiceProviderConfig',
        'Bulk',
        'Me',
        '.search',
        'User',
        USER_SCHEMA_URN,
      ),
      fc.uuid(),
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((x) => x !== '.' && x !== '..')
        .map(encodeURIComponent),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
        fc.array(segment, { minLength: 0, maxLength: 3 }),
        fc.option(fc.jsonValue({ maxDepth: 2 })),
        async (method, segments, body) => {
          const path = segments.length ? `/${segments.join('/')}` : '';
          const res = await a.scim(method, path, body === null || method === 'GET' ? undefined : JSON.stringify(body));
          const what = `${method} ${path}`;
          expectWellFormed(res, [200, 201, 204, 400, 404, 405, 409], what);
          expectNothingOfB(res, what);
        },
      ),
      { numRuns: RUNS },
    );
    expect(await snapshot(store.db, b.org.org_id)).to.equal(bBefore);
  });

  it("another org's token or user ids never reach this org's rows", async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'), fc.constantFrom(...bIds), async (method, id) => {
        const body =
          method === 'PUT'
            ? userBody('x@example.test', { active: false })
            : method === 'PATCH'
              ? { Operations: [{ op: 'replace', path: 'active', value: false }] }
              : undefined;
        const viaA = await a.scim(method, `/Users/${id}`, body);
        expectWellFormed(viaA, [404], `${method} B's user on A's URL`);
        const crossToken = await b.scim(method, `/Users/${id}`, body, { token: a.token });
        expectWellFormed(crossToken, [401], `${method} with A's token on B's URL`);
      }),
      { numRuns: 40 },
    );
    expect(await snapshot(store.db, b.org.org_id)).to.equal(bBefore);
  });
});
