import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { ledger_sum } from '../../../control-plane/stores/workspaces.js';
import { change_feed_since } from '../../../control-plane/stores/change-feed.js';

describeEachStore('console: workspaces and credits', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db, { env: { EDGE_BASE_URL: 'https://edge.example.test' } });
  });
  after(() => cp.close());

  it("200: lists the org's workspaces with a zero balance; any member may read", async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const body = await ok(`${cp.url}/v1/orgs/${org.org_id}/workspaces`, { token: m.token });
    expect(body).to.deep.equal([{ id: org.workspace_id, slug: org.workspace_slug, balance_usd: 0 }]);
  });

  it('200: shows a workspace with the SDK base URLs on the edge', async () => {
    const org = await seedOrg(cp.deps);
    const body = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}`, { token: org.console_token });
    expect(body).to.deep.equal({
      id: org.workspace_id,
      slug: org.workspace_slug,
      balance_usd: 0,
      chat_completions_base_url: `https://edge.example.test/${org.workspace_slug}/v1`,
      messages_base_url: `https://edge.example.test/${org.workspace_slug}/anthropic`,
    });
  });

  it('401 without a token; 404 for another org, unknown and malformed ids', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    expect((await call(`${cp.url}/v1/workspaces/${org.workspace_id}`)).status).to.equal(401);
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/workspaces`)).status).to.equal(401);
    expect((await call(`${cp.url}/v1/orgs/${other.org_id}/workspaces`, { token: org.console_token })).status).to.equal(404);
    for (const id of [other.workspace_id, '00000000-0000-0000-0000-000000000000', 'x', "1'; drop table workspaces; --"]) {
      const path = `${cp.url}/v1/workspaces/${encodeURIComponent(id)}`;
      expect((await call(path, { token: org.console_token })).status, id).to.equal(404);
      const credit = await call(`${path}/credits`, { token: org.console_token, body: { amount_usd: 5 } });
      expect(credit.status, id).to.equal(404);
    }
    const again = await ok(`${cp.url}/v1/workspaces/${other.workspace_id}`, { token: other.console_token });
    expect(again.balance_usd).to.equal(0);
  });

  it('200: credits move balance_usd, the ledger sum agrees, and each credit is audited and published', async () => {
    const org = await seedOrg(cp.deps);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    const url = `${cp.url}/v1/workspaces/${org.workspace_id}/credits`;
    const first = await ok(url, { token: org.console_token, body: { amount_usd: 25 } });
    expect(first).to.deep.equal({ balance_usd: 25 });
    const second = await ok(url, { token: admin.token, body: { amount_usd: 0.125 } });
    expect(second).to.deep.equal({ balance_usd: 25.125 });
    const shown = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}`, { token: org.console_token });
    expect(shown.balance_usd).to.equal(25.125);
    expect(await ledger_sum(store.db, org.workspace_id)).to.equal(25.125);

    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit`, { token: org.console_token });
    const credits = audit.filter((a: { action: string }) => a.action === 'workspace.credit');
    expect(credits).to.have.length(2);
    expect(credits[0]).to.include({ actor: `user:${admin.user_id}`, target_id: org.workspace_id });
    expect(credits[0].detail).to.deep.equal({ workspace_slug: org.workspace_slug, amount_usd: 0.125, balance_usd: 25.125 });
    const feed = await change_feed_since(store.db, 0, 100_000);
    expect(feed.filter((c) => c.topic === 'workspace' && c.subject_id === org.workspace_id)).to.have.length(2);
  });

  it('403 for a member crediting, and nothing moves', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const res = await call(`${cp.url}/v1/workspaces/${org.workspace_id}/credits`, { token: m.token, body: { amount_usd: 10 } });
    expect(res.status).to.equal(403);
    expect(await ledger_sum(store.db, org.workspace_id)).to.equal(0);
  });

  it('400 naming amount_usd for zero, negative, below a nano-dollar, too large, string, missing, and an unknown field', async () => {
    const org = await seedOrg(cp.deps);
    const url = `${cp.url}/v1/workspaces/${org.workspace_id}/credits`;
    const bodies: unknown[] = [
      { amount_usd: 0 },
      { amount_usd: -5 },
      { amount_usd: 1e-12 },
      { amount_usd: 1e12 },
      { amount_usd: '10' },
      {},
      '{"amount_usd": 1e999}',
    ];
    for (const body of bodies) {
      const res = await call(url, { token: org.console_token, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.body.detail).to.include('amount_usd');
    }
    // docs/console-api.md quotes this answer word for word.
    const zero = await call(url, { token: org.console_token, body: { amount_usd: 0 } });
    expect(zero.body.detail).to.equal('amount_usd: must be at least 0.000000001');
    const extra = await call(url, { token: org.console_token, body: { amount_usd: 1, currency: 'EUR' } });
    expect(extra.status).to.equal(400);
    expect(extra.body.detail).to.include('currency');
    expect(await ledger_sum(store.db, org.workspace_id)).to.equal(0);
  });
});
