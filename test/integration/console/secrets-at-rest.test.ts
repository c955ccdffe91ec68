import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';

describeEachStore('console: no secret is stored in plaintext', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('a dump of every row of every table holds no API key and no console token, whole or in part', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const team = (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'T' } }, 201)).id;
    await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: m.user_id } }, 204);
    await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/credits`, { token: org.console_token, body: { amount_usd: 3 } });
    const personal = await ok(`${cp.url}/v1/teams/${team}/keys`, { token: m.token, body: { kind: 'personal', name: 'p' } }, 201);
    const shared = await ok(`${cp.url}/v1/teams/${team}/keys`, { token: org.console_token, body: { kind: 'team', name: 't' } }, 201);
    await ok(`${cp.url}/v1/keys/${personal.id}`, { method: 'DELETE', token: m.token }, 204);

    const tables = await store.db.query<{ tablename: string }>(
      `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`,
    );
    expect(tables.map((t) => t.tablename)).to.include.members(['api_keys', 'console_sessions', 'audit_log', 'change_feed']);
    let dump = '';
    for (const { tablename } of tables) {
      const rows = await store.db.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${tablename}" t`);
      dump += rows.map((r) => r.j).join('\n');
    }
    expect(dump).to.include(personal.id);
    for (const secret of [personal.key, shared.key, org.console_token, m.token]) {
      // The random middle: neither the whole secret nor a recognizable part of it.
      expect(dump).not.to.include(secret.slice(10, -4));
    }
  });
});
