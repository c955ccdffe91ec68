import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { USER_SCHEMA, patchBody, seedScimOrg, userBody, type ScimOrg } from '../../support/scim.js';
import { openSession } from '../../../control-plane/services/auth/sessions.js';
import { audit_list } from '../../../control-plane/stores/audit.js';

describeEachStore('SCIM: membership, sessions and audit', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  let n = 0;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  async function provisioned(): Promise<{ id: string; userName: string; session: string }> {
    n += 1;
    const userName = `dep${n}@example.test`;
    const res = await s.scim('POST', '/Users', userBody(userName));
    expect(res.status).to.equal(201);
    const { token } = await openSession(cp.deps, store.db, s.org.org_id, res.body.id);
    expect((await call(`${cp.url}/v1/me`, { token })).status, 'the session works before').to.equal(200);
    return { id: res.body.id, userName, session: token };
  }
  const membership = async (id: string) =>
    (await store.db.query<{ role: string; status: string }>('SELECT role, status FROM memberships WHERE user_id = $1', [id]))[0];
  const liveSessions = async (id: string) =>
    (await store.db.query('SELECT id FROM console_sessions WHERE user_id = $1 AND revoked_at IS NULL', [id])).length;
  const feedFor = async (id: string) =>
    (await store.db.query<{ topic: string }>('SELECT topic FROM change_feed WHERE subject_id = $1', [id])).map((r) => r.topic);
  const auditFor = async (id: string) => (await audit_list(store.db, s.org.org_id, 1000)).filter((a) => a.target_id === id);

  it('create → an active membership with the member role, audited with actor scim', async () => {
    const { id, userName } = await provisioned();
    expect(await membership(id)).to.deep.equal({ role: 'member', status: 'active' });
    const audit = await auditFor(id);
    expect(audit.map((a) => [a.actor, a.action])).to.deep.include(['scim', 'scim.user.create']);
    expect(audit.find((a) => a.action === 'scim.user.create')!.detail).to.include({ user_name: userName });
    const members = await store.db.query<{ source: string }>('SELECT source FROM users WHERE id = $1', [id]);
    expect(members[0]!.source).to.equal('scim');
  });

  it('PATCH active=false: membership inactive, every session revoked, change published, and the very next /v1/me is 401', async () => {
    const { id, session } = await provisioned();
    const second = await openSession(cp.deps, store.db, s.org.org_id, id);
    const res = await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', path: 'active', value: false }));
    expect(res.status).to.equal(200);
    expect(res.body.active).to.equal(false);
    expect((await call(`${cp.url}/v1/me`, { token: session })).status).to.equal(401);
    expect((await call(`${cp.url}/v1/me`, { token: second.token })).status).to.equal(401);
    expect(await membership(id)).to.deep.equal({ role: 'member', status: 'inactive' });
    expect(await liveSessions(id)).to.equal(0);
    expect(await feedFor(id)).to.include('user');
    const audit = await auditFor(id);
    expect(audit.map((a) => [a.actor, a.action])).to.deep.include(['scim', 'scim.user.deactivate']);
  });

  it('PUT active=false deprovisions the same way', async () => {
    const { id, userName, session } = await provisioned();
    const res = await s.scim('PUT', `/Users/${id}`, { schemas: [USER_SCHEMA], userName, active: false });
    expect(res.status).to.equal(200);
    expect(res.body.active).to.equal(false);
    expect((await call(`${cp.url}/v1/me`, { token: session })).status).to.equal(401);
    expect(await membership(id)).to.include({ status: 'inactive' });
    expect(await liveSessions(id)).to.equal(0);
  });

  it('a new session of an inactive user is refused too', async () => {
    const { id } = await provisioned();
    await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', path: 'active', value: 'False' }));
    const { token } = await openSession(cp.deps, store.db, s.org.org_id, id);
    expect((await call(`${cp.url}/v1/me`, { token })).status).to.equal(401);
  });

  it('reactivation restores the membership and keeps the role the console gave; old sessions stay ended', async () => {
    const { id, session } = await provisioned();
    await store.db.query(`UPDATE memberships SET role = 'admin' WHERE user_id = $1`, [id]);
    await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', path: 'active', value: false }));
    const res = await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', path: 'active', value: true }));
    expect(res.body.active).to.equal(true);
    expect(await membership(id)).to.deep.equal({ role: 'admin', status: 'active' });
    expect((await call(`${cp.url}/v1/me`, { token: session })).status).to.equal(401);
    const fresh = await openSession(cp.deps, store.db, s.org.org_id, id);
    expect((await call(`${cp.url}/v1/me`, { token: fresh.token })).status).to.equal(200);
    expect((await auditFor(id)).map((a) => a.action)).to.include('scim.user.reactivate');
  });

  it('SCIM never changes roles: roles in a PATCH or PUT are ignored', async () => {
    const { id, userName } = await provisioned();
    await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'add', path: 'roles', value: [{ value: 'owner' }] }));
    await s.scim('PUT', `/Users/${id}`, { schemas: [USER_SCHEMA], userName, roles: [{ value: 'admin', primary: true }] });
    expect(await membership(id)).to.deep.equal({ role: 'member', status: 'active' });
  });

  it('an update that is not a deactivation leaves sessions alone and is audited', async () => {
    const { id, session } = await provisioned();
    await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', path: 'displayName', value: 'Still here' }));
    expect((await call(`${cp.url}/v1/me`, { token: session })).status).to.equal(200);
    const update = (await auditFor(id)).find((a) => a.action === 'scim.user.update');
    expect(update?.detail).to.deep.include({ changed: ['display_name'] });
    const same = await s.scim('GET', `/Users/${id}`);
    const put = await s.scim('PUT', `/Users/${id}`, { ...same.body, meta: undefined });
    expect(put.status).to.equal(200);
    const updates = (await auditFor(id)).filter((a) => a.action === 'scim.user.update');
    expect(updates[0]!.detail, 'a PUT of the same User changes nothing').to.deep.include({ via: 'put', changed: [] });
  });

  it('DELETE removes the user, its membership, sessions and team memberships, keeps its API keys, and is audited', async () => {
    const { id, session } = await provisioned();
    const [team] = await store.db.query<{ id: string }>(
      `INSERT INTO teams (org_id, workspace_id, name) VALUES ($1, $2, 'scim-team-' || $3) RETURNING id`,
      [s.org.org_id, s.org.workspace_id, id],
    );
    await store.db.query('INSERT INTO team_members (team_id, user_id) VALUES ($1, $2)', [team!.id, id]);
    await store.db.query(
      `INSERT INTO api_keys (org_id, workspace_id, team_id, kind, owner_user_id, name, key_hash, prefix, last4)
       VALUES ($1, $2, $3, 'personal', $4, 'mine', $5, 'tgk_abcdef', 'wxyz')`,
      [s.org.org_id, s.org.workspace_id, team!.id, id, `hash-${id}`],
    );
    expect((await s.scim('DELETE', `/Users/${id}`)).status).to.equal(204);
    expect((await call(`${cp.url}/v1/me`, { token: session })).status).to.equal(401);
    for (const [table, column] of [
      ['users', 'id'],
      ['memberships', 'user_id'],
      ['console_sessions', 'user_id'],
      ['team_members', 'user_id'],
    ]) {
      expect(await store.db.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [id]), table).to.have.length(0);
    }
    const keys = await store.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE owner_user_id = $1', [id]);
    expect(keys).to.have.length(1);
    expect(keys[0]!.revoked_at, 'deprovisioning does not revoke keys').to.equal(null);
    expect((await auditFor(id)).map((a) => [a.actor, a.action])).to.deep.include(['scim', 'scim.user.delete']);
    expect(await feedFor(id)).to.include('user');
  });

  it('deactivation does not revoke the API keys the user created', async () => {
    const { id } = await provisioned();
    const [team] = await store.db.query<{ id: string }>(
      `INSERT INTO teams (org_id, workspace_id, name) VALUES ($1, $2, 'keys-team-' || $3) RETURNING id`,
      [s.org.org_id, s.org.workspace_id, id],
    );
    await store.db.query(
      `INSERT INTO api_keys (org_id, workspace_id, team_id, kind, owner_user_id, name, key_hash, prefix, last4)
       VALUES ($1, $2, $3, 'personal', $4, 'mine', $5, 'tgk_abcdef', 'wxyz')`,
      [s.org.org_id, s.org.workspace_id, team!.id, id, `hash2-${id}`],
    );
    await s.scim('PATCH', `/Users/${id}`, patchBody({ op: 'replace', value: { active: false } }));
    const keys = await store.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE owner_user_id = $1', [id]);
    expect(keys[0]!.revoked_at).to.equal(null);
  });

  it('a user created inactive gets an inactive membership', async () => {
    const res = await s.scim('POST', '/Users', userBody('born.inactive@example.test', { active: false }));
    expect(res.status).to.equal(201);
    expect(res.body.active).to.equal(false);
    expect(await membership(res.body.id)).to.deep.equal({ role: 'member', status: 'inactive' });
  });
});
