import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ERROR_SCHEMA, patchBody, seedScimOrg, userBody, type ScimOrg } from '../../support/scim.js';
import { audit_list } from '../../../control-plane/stores/audit.js';

/**
 * An admin can mint a provisioning token; without this rule they could then
 * deactivate or delete every owner over SCIM, which the console never allows.
 */
describeEachStore('SCIM: the last active owner stays', (store) => {
  let cp: TestControlPlane;
  let s: ScimOrg;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    s = await seedScimOrg(cp);
  });
  after(() => cp.close());

  const ownerId = () => s.org.owner_user_id;
  const membership = async (id: string) =>
    (await store.db.query<{ role: string; status: string }>('SELECT role, status FROM memberships WHERE user_id = $1', [id]))[0];
  const refusals = async (id: string) =>
    (await audit_list(store.db, s.org.org_id, 1000)).filter((a) => a.target_id === id && a.action === 'scim.user.refused');

  function expectRefused(res: Awaited<ReturnType<ScimOrg['scim']>>): void {
    expect(res.status).to.equal(400);
    expect(res.body.schemas).to.deep.equal([ERROR_SCHEMA]);
    expect(res.body.scimType).to.equal('mutability');
    expect(res.body.detail).to.match(/last active owner/);
  }

  it('PATCH active=false on the only owner is 400 mutability, audited, and changes nothing', async () => {
    const res = await s.scim('PATCH', `/Users/${ownerId()}`, patchBody({ op: 'replace', path: 'active', value: false }));
    expectRefused(res);
    expect(await membership(ownerId())).to.deep.equal({ role: 'owner', status: 'active' });
    expect((await call(`${cp.url}/v1/me`, { token: s.org.console_token })).status, 'the owner still works').to.equal(200);
    const audit = await refusals(ownerId());
    expect(audit).to.have.length(1);
    expect(audit[0]!.actor).to.equal('scim');
    expect(audit[0]!.detail).to.include({ via: 'patch', reason: 'last_active_owner' });
  });

  it('PUT active=false and DELETE on the only owner are refused the same way', async () => {
    const current = await s.scim('GET', `/Users/${ownerId()}`);
    expectRefused(await s.scim('PUT', `/Users/${ownerId()}`, { ...current.body, active: false }));
    expectRefused(await s.scim('DELETE', `/Users/${ownerId()}`));
    expect((await s.scim('GET', `/Users/${ownerId()}`)).body.active).to.equal(true);
    expect((await refusals(ownerId())).map((a) => a.detail.via)).to.include.members(['put', 'delete']);
  });

  it('with a second active owner, SCIM may deactivate one of them, but not then the other', async () => {
    const created = await s.scim('POST', '/Users', userBody('second.owner@example.test'));
    const second = created.body.id as string;
    await store.db.query(`UPDATE memberships SET role = 'owner' WHERE user_id = $1`, [second]);
    const first = await s.scim('PATCH', `/Users/${ownerId()}`, patchBody({ op: 'replace', value: { active: false } }));
    expect(first.status).to.equal(200);
    expect(await membership(ownerId())).to.deep.equal({ role: 'owner', status: 'inactive' });
    expectRefused(await s.scim('DELETE', `/Users/${second}`));
    // An inactive owner is not the last active one: it may go.
    expect((await s.scim('DELETE', `/Users/${ownerId()}`)).status).to.equal(204);
  });
});
