import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import { change_feed_latest, change_feed_since } from '../../../control-plane/stores/change-feed.js';

describeEachStore('console: teams and team members', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  async function newTeam(org: BootstrapResult, name = 'Platform'): Promise<string> {
    const body = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name } }, 201);
    return body.id;
  }

  it('201: an admin creates a team; it is listed and shown; the creation is audited', async () => {
    const org = await seedOrg(cp.deps);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    const created = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: admin.token, body: { name: '  Research  ' } }, 201);
    expect(created).to.have.keys('id', 'name');
    expect(created.name).to.equal('Research');
    const listed = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: admin.token });
    expect(listed).to.deep.equal([{ ...created, member_count: 0, models: [], stale_models: [], spend_usd: 0 }]);
    const shown = await ok(`${cp.url}/v1/teams/${created.id}`, { token: admin.token });
    expect(shown).to.deep.equal({ ...created, workspace_id: org.workspace_id });
    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit`, { token: admin.token });
    expect(audit[0]).to.include({ action: 'team.create', target_id: created.id, actor: `user:${admin.user_id}` });
  });

  it('409 for a duplicate team name in the workspace, compared case-insensitively', async () => {
    const org = await seedOrg(cp.deps);
    await newTeam(org, 'Platform');
    const res = await call(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'platform' } });
    expect(res.status).to.equal(409);
    expect(res.headers.get('content-type')).to.include('application/problem+json');
    const listed = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token });
    expect(listed).to.have.length(1);
  });

  it('the same team name is fine in another org', async () => {
    const a = await seedOrg(cp.deps);
    const b = await seedOrg(cp.deps);
    await newTeam(a, 'Shared');
    await newTeam(b, 'Shared');
  });

  it('400 naming the field for an empty, blank, too long, control-character or non-string name, and unknown fields', async () => {
    const org = await seedOrg(cp.deps);
    const url = `${cp.url}/v1/workspaces/${org.workspace_id}/teams`;
    for (const body of [{ name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 'a\u0000b' }, { name: 'line\nbreak' }, { name: 7 }, {}]) {
      const res = await call(url, { token: org.console_token, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.detail).to.include('name');
    }
    const extra = await call(url, { token: org.console_token, body: { name: 'ok', budget: 1 } });
    expect(extra.status).to.equal(400);
    expect(extra.body.detail).to.include('budget');
  });

  it('403 for a member creating a team or changing team membership', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const m = await addMember(cp.deps, org.org_id);
    expect((await call(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: m.token, body: { name: 'Mine' } })).status).to.equal(403);
    expect((await call(`${cp.url}/v1/teams/${team}/members`, { token: m.token, body: { user_id: m.user_id } })).status).to.equal(403);
    expect((await call(`${cp.url}/v1/teams/${team}/members/${org.owner_user_id}`, { method: 'DELETE', token: m.token })).status).to.equal(403);
  });

  it("401 without a token; 404 for another org's, unknown and malformed workspace and team ids", async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    const otherTeam = await newTeam(other);
    expect((await call(`${cp.url}/v1/teams/${otherTeam}`)).status).to.equal(401);
    for (const ws of [other.workspace_id, 'nope', '00000000-0000-0000-0000-000000000000']) {
      expect((await call(`${cp.url}/v1/workspaces/${ws}/teams`, { token: org.console_token, body: { name: 'X' } })).status, ws).to.equal(404);
      expect((await call(`${cp.url}/v1/workspaces/${ws}/teams`, { token: org.console_token })).status, ws).to.equal(404);
    }
    for (const t of [otherTeam, 'nope', '00000000-0000-0000-0000-000000000000']) {
      expect((await call(`${cp.url}/v1/teams/${t}`, { token: org.console_token })).status, t).to.equal(404);
      expect((await call(`${cp.url}/v1/teams/${t}/members`, { token: org.console_token })).status, t).to.equal(404);
      const add = await call(`${cp.url}/v1/teams/${t}/members`, { token: org.console_token, body: { user_id: org.owner_user_id } });
      expect(add.status, t).to.equal(404);
      const del = await call(`${cp.url}/v1/teams/${t}/members/${org.owner_user_id}`, { method: 'DELETE', token: org.console_token });
      expect(del.status, t).to.equal(404);
    }
    expect(await ok(`${cp.url}/v1/teams/${otherTeam}/members`, { token: other.console_token })).to.deep.equal([]);
  });

  it('204: adds members (twice is the same as once) and lists them', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const m = await addMember(cp.deps, org.org_id, { userName: `alice-${process.pid}@example.test` });
    for (const userId of [org.owner_user_id, m.user_id, m.user_id]) {
      await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: userId } }, 204);
    }
    const listed = await ok(`${cp.url}/v1/teams/${team}/members`, { token: m.token });
    expect(listed).to.deep.equal([
      { user_id: m.user_id, user_name: m.user_name },
      { user_id: org.owner_user_id, user_name: `owner@${org.org_slug}.test` },
    ]);
    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit`, { token: org.console_token });
    expect(audit.filter((a: { action: string }) => a.action === 'team.member_add')).to.have.length(2);
  });

  it("404 adding another org's user or an unknown user; 400 for an inactive member or a malformed user_id", async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const gone = await addMember(cp.deps, org.org_id, { status: 'inactive' });
    const add = (body: unknown) => call(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body });
    expect((await add({ user_id: other.owner_user_id })).status).to.equal(404);
    expect((await add({ user_id: '00000000-0000-0000-0000-000000000000' })).status).to.equal(404);
    const inactive = await add({ user_id: gone.user_id });
    expect(inactive.status).to.equal(400);
    expect(inactive.body.detail).to.include('user_id');
    for (const body of [{ user_id: 'bob' }, { user_id: 12 }, {}, { user_id: org.owner_user_id, role: 'x' }]) {
      const res = await add(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
    expect(await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token })).to.deep.equal([]);
  });

  it('204: removes a member, revoking their personal keys in that team only; team keys survive; a key change is published for each', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org, 'A');
    const otherTeam = await newTeam(org, 'B');
    const m = await addMember(cp.deps, org.org_id);
    for (const t of [team, otherTeam]) {
      await ok(`${cp.url}/v1/teams/${t}/members`, { token: org.console_token, body: { user_id: m.user_id } }, 204);
    }
    const mkKey = (t: string, token: string, kind: string, name: string) => ok(`${cp.url}/v1/teams/${t}/keys`, { token, body: { kind, name } }, 201);
    const p1 = await mkKey(team, m.token, 'personal', 'laptop');
    const p2 = await mkKey(team, m.token, 'personal', 'ci');
    const elsewhere = await mkKey(otherTeam, m.token, 'personal', 'other team');
    const shared = await mkKey(team, org.console_token, 'team', 'service');

    const feedBefore = await change_feed_latest(store.db);
    await ok(`${cp.url}/v1/teams/${team}/members/${m.user_id}`, { method: 'DELETE', token: org.console_token }, 204);

    const keys = await ok(`${cp.url}/v1/teams/${team}/keys`, { token: org.console_token });
    const revoked = new Map(keys.map((k: { id: string; revoked_at: string | null }) => [k.id, k.revoked_at]));
    expect(revoked.get(p1.id)).to.be.a('string');
    expect(revoked.get(p2.id)).to.be.a('string');
    expect(revoked.get(shared.id)).to.equal(null);
    const other = await ok(`${cp.url}/v1/teams/${otherTeam}/keys`, { token: org.console_token });
    expect(other[0]).to.include({ id: elsewhere.id, revoked_at: null });
    expect(await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token })).to.deep.equal([]);

    const feed = await change_feed_since(store.db, feedBefore, 100_000);
    const keyChanges = feed.filter((c) => c.topic === 'key').map((c) => c.subject_id);
    expect(keyChanges).to.have.members([p1.id, p2.id]);
    expect(keyChanges).not.to.include(shared.id);
    expect(keyChanges).not.to.include(elsewhere.id);

    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit`, { token: org.console_token });
    const removal = audit.find((a: { action: string }) => a.action === 'team.member_remove');
    expect(removal.detail.user_id).to.equal(m.user_id);
    expect(removal.detail.revoked_key_ids).to.have.members([p1.id, p2.id]);
    // The trail names what it touched, so it reads without looking ids up.
    expect(removal.detail.revoked_keys.map((k: { prefix: string }) => k.prefix)).to.have.members([p1.prefix, p2.prefix]);
    expect(removal.detail.team_name).to.be.a('string').and.not.equal('');

    // The former member can no longer see the team's keys or make personal ones there.
    expect((await call(`${cp.url}/v1/teams/${team}/keys`, { token: m.token })).status).to.equal(403);
  });

  it('204 again when the user is no longer in the team; 404 for a user of another org or a malformed id', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const m = await addMember(cp.deps, org.org_id);
    const del = (userId: string) => call(`${cp.url}/v1/teams/${team}/members/${userId}`, { method: 'DELETE', token: org.console_token });
    await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: m.user_id } }, 204);
    expect((await del(m.user_id)).status).to.equal(204);
    expect((await del(m.user_id)).status).to.equal(204);
    expect((await del(other.owner_user_id)).status).to.equal(404);
    expect((await del('not-a-uuid')).status).to.equal(404);
  });
});
