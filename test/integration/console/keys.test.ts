import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok, type TestMember } from '../../support/console.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import { change_feed_since } from '../../../control-plane/stores/change-feed.js';
import { api_key_find_by_hash } from '../../../control-plane/stores/api-keys.js';
import { isWellFormedSecret, sha256Hex } from '../../../shared/secrets.js';

describeEachStore('console: API keys', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  interface Fixture {
    org: BootstrapResult;
    team: string;
    member: TestMember;
    outsider: TestMember;
    admin: TestMember;
  }

  /** An org with one team holding `member`; `outsider` is in the org but not the team; `admin` is an admin outside the team. */
  async function fixture(): Promise<Fixture> {
    const org = await seedOrg(cp.deps);
    const team = (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'T' } }, 201)).id;
    const member = await addMember(cp.deps, org.org_id);
    const outsider = await addMember(cp.deps, org.org_id);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: member.user_id } }, 204);
    return { org, team, member, outsider, admin };
  }

  const create = (team: string, token: string, body: unknown) => call(`${cp.url}/v1/teams/${team}/keys`, { token, body });

  it('201: a team member creates a personal key; the secret is well formed, stored only as its SHA-256, and proxies are told', async () => {
    const f = await fixture();
    const res = await create(f.team, f.member.token, { kind: 'personal', name: 'laptop' });
    expect(res.status).to.equal(201);
    expect(res.body).to.have.keys(
      'id',
      'key',
      'prefix',
      'kind',
      'name',
      'team_id',
      'workspace_id',
      'owner_user_id',
      'budget_usd',
      'budget_period',
      'rpm',
      'tpm',
      'expires_at',
      'created_at',
    );
    expect(res.body).to.include({
      kind: 'personal',
      name: 'laptop',
      team_id: f.team,
      workspace_id: f.org.workspace_id,
      owner_user_id: f.member.user_id,
      budget_usd: null,
      rpm: null,
      tpm: null,
      expires_at: null,
    });
    expect(isWellFormedSecret(res.body.key, 'apiKey')).to.equal(true);
    expect(res.body.key.startsWith(res.body.prefix)).to.equal(true);
    expect(res.body.prefix.length).to.be.lessThan(res.body.key.length - 20);
    const stored = await api_key_find_by_hash(store.db, sha256Hex(res.body.key));
    expect(stored?.id).to.equal(res.body.id);
    expect(stored?.last4).to.equal(res.body.key.slice(-4));
    const feed = await change_feed_since(store.db, 0, 100_000);
    expect(feed.some((c) => c.topic === 'key' && c.subject_id === res.body.id)).to.equal(true);
  });

  it('201: an admin creates a team key with limits; it has no owner and echoes the limits', async () => {
    const f = await fixture();
    const expires = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const res = await create(f.team, f.admin.token, { kind: 'team', name: 'ci', budget_usd: 12.5, rpm: 60, tpm: 100_000, expires_at: expires });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ kind: 'team', owner_user_id: null, budget_usd: 12.5, rpm: 60, tpm: 100_000, expires_at: expires });
    const zero = await create(f.team, f.org.console_token, { kind: 'team', name: 'frozen', budget_usd: 0 });
    expect(zero.status).to.equal(201);
    expect(zero.body.budget_usd).to.equal(0);
  });

  it('403: personal keys need team membership (admins too); team keys need admin', async () => {
    const f = await fixture();
    expect((await create(f.team, f.outsider.token, { kind: 'personal', name: 'x' })).status).to.equal(403);
    expect((await create(f.team, f.admin.token, { kind: 'personal', name: 'x' })).status).to.equal(403);
    expect((await create(f.team, f.member.token, { kind: 'team', name: 'x' })).status).to.equal(403);
    await ok(`${cp.url}/v1/teams/${f.team}/members`, { token: f.org.console_token, body: { user_id: f.admin.user_id } }, 204);
    expect((await create(f.team, f.admin.token, { kind: 'personal', name: 'mine' })).status).to.equal(201);
  });

  it('400 naming the field for each invalid input, and no key is made', async () => {
    const f = await fixture();
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: 'org', name: 'x' }, 'kind'],
      [{ name: 'x' }, 'kind'],
      [{ kind: 'personal' }, 'name'],
      [{ kind: 'personal', name: '' }, 'name'],
      [{ kind: 'personal', name: '   ' }, 'name'],
      [{ kind: 'personal', name: 'n'.repeat(101) }, 'name'],
      [{ kind: 'personal', name: 'a\u0000b' }, 'name'],
      [{ kind: 'personal', name: 'x', budget_usd: -1 }, 'budget_usd'],
      [{ kind: 'personal', name: 'x', budget_usd: '5' }, 'budget_usd'],
      [{ kind: 'personal', name: 'x', budget_usd: 1e30 }, 'budget_usd'],
      [{ kind: 'personal', name: 'x', rpm: 0 }, 'rpm'],
      [{ kind: 'personal', name: 'x', rpm: 1.5 }, 'rpm'],
      [{ kind: 'personal', name: 'x', rpm: 1e10 }, 'rpm'],
      [{ kind: 'personal', name: 'x', tpm: -3 }, 'tpm'],
      [{ kind: 'personal', name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      [{ kind: 'personal', name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ kind: 'personal', name: 'x', expires_at: 1893456000 }, 'expires_at'],
      [{ kind: 'personal', name: 'x', owner_user_id: 'someone' }, 'owner_user_id'],
    ];
    for (const [body, field] of cases) {
      const res = await create(f.team, f.member.token, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.body.detail, JSON.stringify(body)).to.include(field);
    }
    expect(await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.member.token })).to.deep.equal([]);
  });

  it("401 without a token; 404 for another org's team, an unknown team and a malformed id", async () => {
    const f = await fixture();
    const other = await fixture();
    expect((await create(f.team, '', { kind: 'personal', name: 'x' })).status).to.equal(401);
    expect((await call(`${cp.url}/v1/teams/${f.team}/keys`)).status).to.equal(401);
    for (const t of [other.team, '00000000-0000-0000-0000-000000000000', 'abc']) {
      expect((await create(t, f.org.console_token, { kind: 'team', name: 'x' })).status, t).to.equal(404);
      expect((await call(`${cp.url}/v1/teams/${t}/keys`, { token: f.org.console_token })).status, t).to.equal(404);
    }
  });

  it('200: the list shows prefix and last4, never the secret; team members and admins see it, others get 403', async () => {
    const f = await fixture();
    const made = (await create(f.team, f.member.token, { kind: 'personal', name: 'laptop', rpm: 10 })).body;
    const list = await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.member.token });
    expect(list).to.have.length(1);
    expect(list[0]).to.deep.equal({
      id: made.id,
      prefix: made.prefix,
      last4: made.key.slice(-4),
      kind: 'personal',
      name: 'laptop',
      team_id: f.team,
      workspace_id: f.org.workspace_id,
      owner_user_id: f.member.user_id,
      budget_usd: null,
      budget_period: null,
      period_spend_usd: null,
      period_resets_at: null,
      spend_usd: 0,
      rpm: 10,
      tpm: null,
      expires_at: null,
      previous_expires_at: null,
      last_used_at: null,
      revoked_at: null,
      created_at: made.created_at,
    });
    expect(await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.admin.token })).to.deep.equal(list);
    expect((await call(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.outsider.token })).status).to.equal(403);
  });

  it('the secret appears in the create response and in no other answer', async () => {
    const f = await fixture();
    const made = (await create(f.team, f.member.token, { kind: 'personal', name: 'laptop' })).body;
    const secretBody = made.key.slice(4, -4);
    const reads = [
      `/v1/teams/${f.team}/keys`,
      `/v1/teams/${f.team}`,
      `/v1/teams/${f.team}/members`,
      `/v1/orgs/${f.org.org_id}/audit?limit=500`,
      `/v1/orgs/${f.org.org_id}/members`,
      `/v1/workspaces/${f.org.workspace_id}`,
    ];
    for (const path of reads) {
      const res = await call(`${cp.url}${path}`, { token: f.org.console_token });
      expect(res.status, path).to.equal(200);
      expect(JSON.stringify(res.body), path).not.to.include(secretBody);
    }
    const revoke = await call(`${cp.url}/v1/keys/${made.id}`, { method: 'DELETE', token: f.member.token });
    expect(revoke.status).to.equal(204);
    expect(JSON.stringify(revoke.body ?? '')).not.to.include(secretBody);
  });

  it('204: the owner revokes a personal key, twice is the same as once; one audit row; a key change is published', async () => {
    const f = await fixture();
    const made = (await create(f.team, f.member.token, { kind: 'personal', name: 'laptop' })).body;
    const before = (await change_feed_since(store.db, 0, 100_000)).filter((c) => c.topic === 'key' && c.subject_id === made.id).length;
    for (let i = 0; i < 2; i++) {
      const res = await call(`${cp.url}/v1/keys/${made.id}`, { method: 'DELETE', token: f.member.token });
      expect(res.status).to.equal(204);
    }
    const [listed] = await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.member.token });
    expect(listed.revoked_at).to.be.a('string');
    const after = (await change_feed_since(store.db, 0, 100_000)).filter((c) => c.topic === 'key' && c.subject_id === made.id).length;
    expect(after - before).to.be.greaterThanOrEqual(1);
    const audit = await ok(`${cp.url}/v1/orgs/${f.org.org_id}/audit`, { token: f.org.console_token });
    const revokes = audit.filter((a: { action: string; target_id: string }) => a.action === 'key.revoke' && a.target_id === made.id);
    expect(revokes).to.have.length(1);
    expect(revokes[0].actor).to.equal(`user:${f.member.user_id}`);
    expect(revokes[0].detail).to.include({ name: made.name, prefix: made.prefix });
  });

  it("403: a member cannot revoke a team key or another member's personal key; an admin can revoke both", async () => {
    const f = await fixture();
    const colleague = await addMember(cp.deps, f.org.org_id);
    await ok(`${cp.url}/v1/teams/${f.team}/members`, { token: f.org.console_token, body: { user_id: colleague.user_id } }, 204);
    const personal = (await create(f.team, f.member.token, { kind: 'personal', name: 'mine' })).body;
    const shared = (await create(f.team, f.org.console_token, { kind: 'team', name: 'shared' })).body;
    for (const id of [personal.id, shared.id]) {
      expect((await call(`${cp.url}/v1/keys/${id}`, { method: 'DELETE', token: colleague.token })).status).to.equal(403);
    }
    expect((await call(`${cp.url}/v1/keys/${shared.id}`, { method: 'DELETE', token: f.member.token })).status).to.equal(403);
    const keys = await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.member.token });
    expect(keys.every((k: { revoked_at: unknown }) => k.revoked_at === null)).to.equal(true);
    for (const id of [personal.id, shared.id]) {
      expect((await call(`${cp.url}/v1/keys/${id}`, { method: 'DELETE', token: f.admin.token })).status).to.equal(204);
    }
  });

  it("401 without a token; 404 for another org's key, an unknown key and a malformed id", async () => {
    const f = await fixture();
    const other = await fixture();
    const theirs = (await create(other.team, other.org.console_token, { kind: 'team', name: 'x' })).body;
    expect((await call(`${cp.url}/v1/keys/${theirs.id}`, { method: 'DELETE' })).status).to.equal(401);
    for (const id of [theirs.id, '00000000-0000-0000-0000-000000000000', 'tgk_whatever', theirs.key]) {
      const res = await call(`${cp.url}/v1/keys/${encodeURIComponent(id)}`, { method: 'DELETE', token: f.org.console_token });
      expect(res.status, id).to.equal(404);
    }
    const [still] = await ok(`${cp.url}/v1/teams/${other.team}/keys`, { token: other.org.console_token });
    expect(still.revoked_at).to.equal(null);
  });

  describe('keys over time: who may PATCH and rotate', () => {
    const patch = (id: string, token: string, body: unknown) => call(`${cp.url}/v1/keys/${id}`, { method: 'PATCH', token, body });
    const rotate = (id: string, token: string, body: unknown = {}) => call(`${cp.url}/v1/keys/${id}/rotate`, { token, body });
    const settings = (f: Fixture, token: string, body?: unknown) =>
      call(`${cp.url}/v1/orgs/${f.org.org_id}/key-settings`, { method: body === undefined ? 'GET' : 'PUT', token, body });

    it("403: a member may not PATCH their own personal key until an admin allows it, and never someone else's", async () => {
      const f = await fixture();
      const own = (await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.member.token, body: { kind: 'personal', name: 'mine' } }, 201)).id;
      const teamKey = (await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.org.console_token, body: { kind: 'team', name: 'shared' } }, 201)).id;
      const refused = await patch(own, f.member.token, { budget_usd: 100 });
      expect(refused.status).to.equal(403);
      expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(refused.body.detail).to.include('key-settings');

      expect((await settings(f, f.member.token)).status, 'members cannot read the setting').to.equal(403);
      expect((await settings(f, f.member.token, { members_edit_own_keys: true })).status).to.equal(403);
      expect((await settings(f, f.admin.token, { members_edit_own_keys: true })).body).to.deep.equal({ members_edit_own_keys: true });

      const changed = await patch(own, f.member.token, { budget_usd: 20, budget_period: 'week', name: 'mine, weekly' });
      expect(changed.status).to.equal(200);
      expect(changed.body).to.include({ budget_usd: 20, budget_period: 'week', period_spend_usd: 0, name: 'mine, weekly' });
      expect(Date.parse(changed.body.period_resets_at as string)).to.be.greaterThan(Date.now());
      const unbudgeted = await patch(own, f.admin.token, { budget_usd: null });
      expect(unbudgeted.body, 'clearing the budget clears its period').to.include({ budget_usd: null, budget_period: null, period_spend_usd: null });
      const other = await patch(teamKey, f.member.token, { name: 'taken' });
      expect(other.status, "a team key is not the member's").to.equal(403);
      expect((await patch(own, f.outsider.token, { name: 'x' })).status, "another member's personal key").to.equal(403);
    });

    it('a member rotates their own personal key (as they may revoke it), not a team key; a revoked key is 409', async () => {
      const f = await fixture();
      const own = (await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.member.token, body: { kind: 'personal', name: 'mine' } }, 201)).id;
      const teamKey = (await ok(`${cp.url}/v1/teams/${f.team}/keys`, { token: f.org.console_token, body: { kind: 'team', name: 'shared' } }, 201)).id;
      const rotated = await rotate(own, f.member.token);
      expect(rotated.status).to.equal(201);
      expect(rotated.headers.get('cache-control')).to.equal('no-store');
      expect(isWellFormedSecret(rotated.body.key as string, 'apiKey')).to.equal(true);
      // Default grace: a day.
      expect(Date.parse(rotated.body.previous_expires_at as string) - Date.now()).to.be.within(86_390_000, 86_400_000);
      const stored = await api_key_find_by_hash(cp.deps.db, sha256Hex(rotated.body.key as string));
      expect(stored?.id).to.equal(own);
      expect((await rotate(teamKey, f.member.token)).status).to.equal(403);
      await ok(`${cp.url}/v1/keys/${own}`, { method: 'DELETE', token: f.member.token }, 204);
      expect((await rotate(own, f.member.token)).status).to.equal(409);
      expect((await patch(own, f.org.console_token, { name: 'x' })).status).to.equal(409);
    });
  });
});
