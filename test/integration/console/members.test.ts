import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';

describeEachStore('console: members and roles', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  const members = (orgId: string) => `${cp.url}/v1/orgs/${orgId}/members`;

  it('200: lists members with user_name, email, role, status and source; any member may read it', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const gone = await addMember(cp.deps, org.org_id, { status: 'inactive' });
    const body = await ok(members(org.org_id), { token: m.token });
    expect(body).to.have.length(3);
    const byId = new Map(body.map((r: { user_id: string }) => [r.user_id, r]));
    expect(byId.get(org.owner_user_id)).to.deep.equal({
      user_id: org.owner_user_id,
      user_name: `owner@${org.org_slug}.test`,
      name: null,
      email: `owner@${org.org_slug}.test`,
      role: 'owner',
      status: 'active',
      source: 'bootstrap',
    });
    expect(byId.get(m.user_id)).to.include({ role: 'member', status: 'active', source: 'scim', email: m.user_name });
    expect(byId.get(gone.user_id)).to.include({ status: 'inactive' });
  });

  it('401 without a token; 404 for another org and a malformed org id', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    expect((await call(members(org.org_id))).status).to.equal(401);
    for (const id of [other.org_id, 'not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
      const res = await call(members(id), { token: org.console_token });
      expect(res.status, id).to.equal(404);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
    }
  });

  it('200: an admin changes a member to admin and back; audit rows record each change', async () => {
    const org = await seedOrg(cp.deps);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    const m = await addMember(cp.deps, org.org_id);
    const up = await ok(`${members(org.org_id)}/${m.user_id}`, { method: 'PATCH', token: admin.token, body: { role: 'admin' } });
    expect(up).to.include({ user_id: m.user_id, role: 'admin', status: 'active', source: 'scim' });
    await ok(`${members(org.org_id)}/${m.user_id}`, { method: 'PATCH', token: admin.token, body: { role: 'member' } });
    const listed = await ok(members(org.org_id), { token: admin.token });
    expect(listed.find((r: { user_id: string }) => r.user_id === m.user_id).role).to.equal('member');
    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit`, { token: admin.token });
    const changes = audit.filter((a: { action: string }) => a.action === 'member.role_change');
    expect(changes.map((a: { detail: unknown }) => a.detail)).to.deep.equal([
      { user_name: m.user_name, from: 'admin', to: 'member' },
      { user_name: m.user_name, from: 'member', to: 'admin' },
    ]);
    expect(changes[0]).to.include({ actor: `user:${admin.user_id}`, target_id: m.user_id });
  });

  it('a demoted admin loses admin rights on the very next request', async () => {
    const org = await seedOrg(cp.deps);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    const credits = `${cp.url}/v1/workspaces/${org.workspace_id}/credits`;
    await ok(credits, { token: admin.token, body: { amount_usd: 1 } });
    await ok(`${members(org.org_id)}/${admin.user_id}`, { method: 'PATCH', token: org.console_token, body: { role: 'member' } });
    expect((await call(credits, { token: admin.token, body: { amount_usd: 1 } })).status).to.equal(403);
  });

  it('403 for a member changing roles, and for an admin granting or removing the owner role', async () => {
    const org = await seedOrg(cp.deps);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    const m = await addMember(cp.deps, org.org_id);
    const patch = (token: string, userId: string, role: string) =>
      call(`${members(org.org_id)}/${userId}`, { method: 'PATCH', token, body: { role } });
    expect((await patch(m.token, m.user_id, 'admin')).status).to.equal(403);
    expect((await patch(admin.token, m.user_id, 'owner')).status).to.equal(403);
    expect((await patch(admin.token, org.owner_user_id, 'member')).status).to.equal(403);
    expect((await patch(admin.token, admin.user_id, 'owner')).status).to.equal(403);
  });

  it('200: an owner grants the owner role, and then one owner may step down', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    await ok(`${members(org.org_id)}/${m.user_id}`, { method: 'PATCH', token: org.console_token, body: { role: 'owner' } });
    const down = await ok(`${members(org.org_id)}/${org.owner_user_id}`, {
      method: 'PATCH',
      token: org.console_token,
      body: { role: 'admin' },
    });
    expect(down.role).to.equal('admin');
  });

  it('409 when the last active owner would be demoted (an inactive owner does not count)', async () => {
    const org = await seedOrg(cp.deps);
    await addMember(cp.deps, org.org_id, { role: 'owner', status: 'inactive' });
    const res = await call(`${members(org.org_id)}/${org.owner_user_id}`, {
      method: 'PATCH',
      token: org.console_token,
      body: { role: 'member' },
    });
    expect(res.status).to.equal(409);
    expect(res.body.detail).to.match(/last active owner/);
    const me = await ok(`${cp.url}/v1/me`, { token: org.console_token });
    expect(me.memberships[0].role).to.equal('owner');
  });

  it('400 naming the field for an unknown role, a missing role, an extra field and bad JSON', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const url = `${members(org.org_id)}/${m.user_id}`;
    const cases: [unknown, RegExp][] = [
      [{ role: 'superuser' }, /role/],
      [{}, /role/],
      [{ role: 'admin', extra: 1 }, /extra/],
      ['{"role":', /JSON/],
    ];
    for (const [body, detail] of cases) {
      const res = await call(url, { method: 'PATCH', token: org.console_token, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.detail).to.match(detail);
    }
  });

  it("404 for an unknown, malformed or another org's user id", async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    for (const id of [other.owner_user_id, 'nope', '00000000-0000-0000-0000-000000000000']) {
      const res = await call(`${members(org.org_id)}/${id}`, { method: 'PATCH', token: org.console_token, body: { role: 'admin' } });
      expect(res.status, id).to.equal(404);
    }
  });

  it('audit: 403 for members, 404 for another org, 400 for a bad limit, limit honoured', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const audit = `${cp.url}/v1/orgs/${org.org_id}/audit`;
    expect((await call(audit, { token: m.token })).status).to.equal(403);
    expect((await call(`${audit}?limit=0`, { token: m.token })).status).to.equal(403);
    expect((await call(`${cp.url}/v1/orgs/${other.org_id}/audit`, { token: org.console_token })).status).to.equal(404);
    expect((await call(`${audit}?limit=0`, { token: org.console_token })).status).to.equal(400);
    const rows = await ok(`${audit}?limit=1`, { token: org.console_token });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ action: 'org.bootstrap', target_id: org.org_id });
    expect(rows[0].id).to.be.a('number');
  });
});

describeEachStore('console: revoking a deactivated member’s personal keys', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('an admin revokes every personal key of a deactivated member, in all teams, audited; team keys and others’ keys stay', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const owner = { token: org.console_token };
    const keys: Record<string, string> = {};
    for (const name of ['alpha', 'beta']) {
      const team = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { ...owner, method: 'POST', body: { name } }, 201);
      await call(`${cp.url}/v1/teams/${team.id}/members`, { ...owner, method: 'POST', body: { user_id: m.user_id } });
      keys[`${name}-personal`] = (
        await ok(`${cp.url}/v1/teams/${team.id}/keys`, { token: m.token, method: 'POST', body: { kind: 'personal', name: 'laptop' } }, 201)
      ).id;
      keys[`${name}-team`] = (
        await ok(`${cp.url}/v1/teams/${team.id}/keys`, { ...owner, method: 'POST', body: { kind: 'team', name: 'ci' } }, 201)
      ).id;
    }
    const url = `${cp.url}/v1/orgs/${org.org_id}/members/${m.user_id}/revoke-personal-keys`;
    // While the member is active, the action is refused: removing them from the team is the way.
    expect((await call(url, { ...owner, method: 'POST' })).status).to.equal(409);
    // Deactivation (as SCIM does it) ends membership and sessions, not keys.
    await cp.deps.db.query(`UPDATE memberships SET status = 'inactive' WHERE org_id = $1 AND user_id = $2`, [org.org_id, m.user_id]);
    expect((await call(url, { token: (await addMember(cp.deps, org.org_id)).token, method: 'POST' })).status).to.equal(403);
    expect(await ok(url, { ...owner, method: 'POST' })).to.deep.equal({ revoked: 2 });
    expect(await ok(url, { ...owner, method: 'POST' })).to.deep.equal({ revoked: 0 });
    const rows = await cp.deps.db.query<{ id: string; revoked: boolean }>(
      `SELECT id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE org_id = $1`,
      [org.org_id],
    );
    const revoked = new Map(rows.map((r) => [r.id, r.revoked]));
    expect(Object.fromEntries(Object.entries(keys).map(([k, id]) => [k, revoked.get(id)]))).to.deep.equal({
      'alpha-personal': true,
      'alpha-team': false,
      'beta-personal': true,
      'beta-team': false,
    });
    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit?limit=5`, owner);
    // Newest first: the second call revoked nothing, the first both keys.
    const [again, row] = audit.filter((r: { action: string }) => r.action === 'member.personal_keys_revoke');
    expect(again.detail.revoked_key_ids).to.deep.equal([]);
    expect(row).to.include({ actor: `user:${org.owner_user_id}`, target_type: 'user', target_id: m.user_id });
    expect(row.detail.revoked_key_ids).to.have.members([keys['alpha-personal'], keys['beta-personal']]);
  });
});
