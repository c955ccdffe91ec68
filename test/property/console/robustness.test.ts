import { expect } from 'chai';
import fc from 'fast-check';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok, type TestMember } from '../../support/console.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import type { Database } from '../../../control-plane/db/database.js';

/**
 * Whatever an authenticated caller sends to the console API, the answer is a
 * problem+json 4xx or a success, never a 5xx; and nothing of another
 * organization changes.
 */
const RUNS = 60;

/** Strings that break naive servers: NUL, control characters, lone surrogates, long and blank values. */
const nasty = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', 'tab\there', 'line\nbreak', '💥'.repeat(60), 'x'.repeat(101), ' ', ''),
);
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, -1, 1e-12, 0.1, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 1e21, Number.MAX_VALUE, Number.MIN_VALUE),
);
const value = fc.oneof(nasty, number, fc.boolean(), fc.constant(null), fc.array(nasty, { maxLength: 3 }), fc.object({ maxDepth: 1 }));
const uuidish = fc.oneof(fc.uuid(), nasty, fc.constantFrom('00000000-0000-0000-0000-000000000000', '%00', '..', 'null'));
const dateish = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2999-12-31T23:59:59Z', '2999-12-31', '2999-12-31T23:59:59', '9999-99-99T99:99:99Z', '+275760-09-13T00:00:00.000Z'),
  value,
);

const keyBody = fc.record(
  {
    kind: fc.oneof(fc.constantFrom('personal', 'team'), value),
    name: fc.oneof(nasty, value),
    budget_usd: fc.oneof(number, value),
    rpm: fc.oneof(number, value),
    tpm: fc.oneof(number, value),
    expires_at: dateish,
    extra: value,
  },
  { requiredKeys: [] },
);
const rawBody = fc.oneof(fc.json(), fc.string({ maxLength: 40 }), fc.constantFrom('', '{', '[]', 'null', '{"a":1}{"b":2}'));

/** Percent-encodes a path segment; a lone surrogate becomes bytes that are not UTF-8 at all. */
function pathSegment(id: string): string {
  try {
    return encodeURIComponent(id);
  } catch {
    return '%ED%BF%BF';
  }
}

async function otherOrgState(db: Database, orgId: string): Promise<string> {
  const rows = await Promise.all([
    db.query('SELECT id, name FROM teams WHERE org_id = $1 ORDER BY id', [orgId]),
    db.query('SELECT id, revoked_at FROM api_keys WHERE org_id = $1 ORDER BY id', [orgId]),
    db.query('SELECT id, balance_usd FROM workspaces WHERE org_id = $1 ORDER BY id', [orgId]),
    db.query('SELECT user_id, role FROM memberships WHERE org_id = $1 ORDER BY user_id', [orgId]),
  ]);
  return JSON.stringify(rows);
}

describeEachStore('console API robustness (property)', (store) => {
  let cp: TestControlPlane;
  let org: BootstrapResult;
  let other: BootstrapResult;
  let member: TestMember;
  let team: string;
  let otherTeam: string;
  let before0: string;

  before(async () => {
    cp = await startTestControlPlane(store.db);
    org = await seedOrg(cp.deps);
    other = await seedOrg(cp.deps);
    member = await addMember(cp.deps, org.org_id);
    team = (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'T' } }, 201)).id;
    await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: member.user_id } }, 204);
    await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: org.owner_user_id } }, 204);
    otherTeam = (await ok(`${cp.url}/v1/workspaces/${other.workspace_id}/teams`, { token: other.console_token, body: { name: 'T' } }, 201)).id;
    await ok(`${cp.url}/v1/teams/${otherTeam}/keys`, { token: other.console_token, body: { kind: 'team', name: 'k' } }, 201);
    before0 = await otherOrgState(store.db, other.org_id);
  });
  after(async () => {
    expect(await otherOrgState(store.db, other.org_id)).to.equal(before0);
    await cp.close();
  });

  function expectHandled(res: { status: number; headers: Headers; body: unknown }, what: string): void {
    // 405: a path with `..` is normalized by the client onto another route; the router answers it, not this API.
    expect(res.status, `${what} → ${res.status} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201, 204, 400, 403, 404, 405, 409, 413]);
    if (res.status >= 400 && res.status !== 405) expect(res.headers.get('content-type'), what).to.include('application/problem+json');
  }

  it('POST /v1/teams/{id}/keys: any body is a 201 or a 4xx', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(keyBody, fc.boolean(), async (body, asMember) => {
        const res = await call(`${cp.url}/v1/teams/${team}/keys`, { token: asMember ? member.token : org.console_token, body });
        expectHandled(res, JSON.stringify(body));
        if (res.status === 201) expect(res.body.key).to.match(/^tgk_/);
      }),
      { numRuns: RUNS },
    );
  });

  it('every write route: any raw body is a success or a 4xx', async function () {
    this.timeout(120_000);
    const routes: [string, string][] = [
      ['POST', `/v1/workspaces/${org.workspace_id}/credits`],
      ['POST', `/v1/workspaces/${org.workspace_id}/teams`],
      ['POST', `/v1/teams/${team}/members`],
      ['PUT', `/v1/teams/${team}/models`],
      ['POST', `/v1/teams/${team}/keys`],
      ['PATCH', `/v1/orgs/${org.org_id}/members/${member.user_id}`],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(
          rawBody,
          keyBody.map((b) => JSON.stringify(b)),
        ),
        async ([method, path], body) => {
          const res = await call(`${cp.url}${path}`, { method, token: org.console_token, body });
          expectHandled(res, `${method} ${path} ${body}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('typed fields with hostile values: names, amounts, user ids, roles and aliases', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          value.map((v) => ['POST', `/v1/workspaces/${org.workspace_id}/teams`, { name: v }] as const),
          nasty.map((v) => ['POST', `/v1/workspaces/${org.workspace_id}/teams`, { name: v }] as const),
          value.map((v) => ['POST', `/v1/workspaces/${org.workspace_id}/credits`, { amount_usd: v }] as const),
          number.map((v) => ['POST', `/v1/workspaces/${org.workspace_id}/credits`, { amount_usd: v }] as const),
          uuidish.map((v) => ['POST', `/v1/teams/${team}/members`, { user_id: v }] as const),
          value.map((v) => ['PATCH', `/v1/orgs/${org.org_id}/members/${member.user_id}`, { role: v }] as const),
          fc.array(nasty, { maxLength: 4 }).map((v) => ['PUT', `/v1/teams/${team}/models`, { models: v }] as const),
        ),
        async ([method, path, body]) => {
          const res = await call(`${cp.url}${path}`, { method, token: org.console_token, body });
          expectHandled(res, `${method} ${path} ${JSON.stringify(body)}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("any path id, including another org's, is a 404 or an answer about our own org, never a 5xx", async function () {
    this.timeout(120_000);
    const templates = [
      (id: string) => ['GET', `/v1/workspaces/${id}`],
      (id: string) => ['GET', `/v1/workspaces/${id}/teams`],
      (id: string) => ['GET', `/v1/teams/${id}`],
      (id: string) => ['GET', `/v1/teams/${id}/keys`],
      (id: string) => ['GET', `/v1/teams/${id}/models`],
      (id: string) => ['GET', `/v1/teams/${id}/members`],
      (id: string) => ['DELETE', `/v1/keys/${id}`],
      (id: string) => ['DELETE', `/v1/teams/${team}/members/${id}`],
      (id: string) => ['DELETE', `/v1/teams/${id}/members/${member.user_id}`],
      (id: string) => ['GET', `/v1/orgs/${id}/members`],
      (id: string) => ['GET', `/v1/orgs/${id}/audit`],
    ] as const;
    const ids = fc.oneof(uuidish, fc.constantFrom(other.org_id, other.workspace_id, otherTeam, other.owner_user_id));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...templates), ids, async (template, id) => {
        const [method, path] = template(pathSegment(id));
        const res = await call(`${cp.url}${path}`, { method, token: org.console_token });
        expectHandled(res, `${method} ${path}`);
        if ([other.org_id, other.workspace_id, otherTeam].includes(id)) expect(res.status, `${method} ${path}`).to.equal(404);
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
