import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { ledger_sum } from '../../../control-plane/stores/workspaces.js';

describeEachStore('console: concurrent changes keep their invariants', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('20 credits at once all land: balance equals their sum and the ledger sum', async () => {
    const org = await seedOrg(cp.deps);
    const url = `${cp.url}/v1/workspaces/${org.workspace_id}/credits`;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => ok(url, { token: org.console_token, body: { amount_usd: i + 0.25 } })));
    const expected = 190 + 20 * 0.25;
    expect(Math.max(...answers.map((a) => a.balance_usd))).to.equal(expected);
    const shown = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}`, { token: org.console_token });
    expect(shown.balance_usd).to.equal(expected);
    expect(await ledger_sum(store.db, org.workspace_id)).to.equal(expected);
  });

  it('two owners demoting each other at once: one succeeds, the other is refused, an active owner remains', async () => {
    for (let round = 0; round < 5; round++) {
      const org = await seedOrg(cp.deps);
      const second = await addMember(cp.deps, org.org_id, { role: 'owner' });
      const demote = (token: string, userId: string) =>
        call(`${cp.url}/v1/orgs/${org.org_id}/members/${userId}`, { method: 'PATCH', token, body: { role: 'admin' } });
      const results = await Promise.all([demote(org.console_token, second.user_id), demote(second.token, org.owner_user_id)]);
      // The loser is refused either by the last-owner rule (409) or, when it is
      // authenticated after the winner committed, because it is no longer an owner (403).
      const statuses = results.map((r) => r.status).sort();
      expect(statuses[0]).to.equal(200);
      expect([403, 409]).to.include(statuses[1]);
      const members = await ok(`${cp.url}/v1/orgs/${org.org_id}/members`, { token: org.console_token });
      expect(members.filter((m: { role: string }) => m.role === 'owner')).to.have.length(1);
    }
  });

  it('a personal key created while its owner is removed from the team never stays active', async () => {
    for (let round = 0; round < 5; round++) {
      const org = await seedOrg(cp.deps);
      const m = await addMember(cp.deps, org.org_id);
      const team = (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'T' } }, 201)).id;
      await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: m.user_id } }, 204);
      const [created, removed] = await Promise.all([
        call(`${cp.url}/v1/teams/${team}/keys`, { token: m.token, body: { kind: 'personal', name: 'racing' } }),
        call(`${cp.url}/v1/teams/${team}/members/${m.user_id}`, { method: 'DELETE', token: org.console_token }),
      ]);
      expect(removed.status).to.equal(204);
      expect([201, 403]).to.include(created.status);
      const keys = await ok(`${cp.url}/v1/teams/${team}/keys`, { token: org.console_token });
      expect(keys.filter((k: { revoked_at: unknown }) => k.revoked_at === null)).to.deep.equal([]);
    }
  });
});
