import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import { change_feed_since } from '../../../control-plane/stores/change-feed.js';

describeEachStore('console: model catalog and team model access', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  async function newTeam(org: BootstrapResult): Promise<string> {
    return (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'T' } }, 201)).id;
  }

  it('200: lists the catalog with prices and nothing about upstreams; 401 without a token', async () => {
    const org = await seedOrg(cp.deps);
    const m = await addMember(cp.deps, org.org_id);
    const body = await ok(`${cp.url}/v1/models`, { token: m.token });
    expect(body).to.deep.equal([
      { alias: 'tg/sonnet', input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
      { alias: 'tg/haiku', input_usd_per_mtok: 1, output_usd_per_mtok: 5 },
      { alias: 'tg/gpt-4o-mini', input_usd_per_mtok: 0.15, output_usd_per_mtok: 0.6 },
      { alias: 'tg/claude-direct', input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
      { alias: 'tg/gpt-direct', input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
      { alias: 'tg/gpt-responses', input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
      { alias: 'tg/gemini-direct', input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
    ]);
    expect((await call(`${cp.url}/v1/models`)).status).to.equal(401);
  });

  it('200: a new team allows no model; an admin sets the list (duplicates collapse), members read it, a team change is published', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const m = await addMember(cp.deps, org.org_id);
    const url = `${cp.url}/v1/teams/${team}/models`;
    expect(await ok(url, { token: m.token })).to.deep.equal({ models: [], stale_models: [] });
    const set = await ok(url, { method: 'PUT', token: org.console_token, body: { models: ['tg/sonnet', 'tg/haiku', 'tg/sonnet'] } });
    expect(set).to.deep.equal({ models: ['tg/haiku', 'tg/sonnet'], stale_models: [] });
    expect(await ok(url, { token: m.token })).to.deep.equal(set);
    const narrowed = await ok(url, { method: 'PUT', token: org.console_token, body: { models: ['tg/gpt-4o-mini'] } });
    expect(narrowed).to.deep.equal({ models: ['tg/gpt-4o-mini'], stale_models: [] });
    expect(await ok(url, { method: 'PUT', token: org.console_token, body: { models: [] } })).to.deep.equal({ models: [], stale_models: [] });

    const feed = await change_feed_since(store.db, 0, 100_000);
    expect(feed.filter((c) => c.topic === 'team' && c.subject_id === team)).to.have.length(3);
    const audit = await ok(`${cp.url}/v1/orgs/${org.org_id}/audit`, { token: org.console_token });
    const sets = audit.filter((a: { action: string }) => a.action === 'team.models_set');
    expect(sets[sets.length - 1].detail).to.deep.include({ before: [], after: ['tg/haiku', 'tg/sonnet'] });
    expect(sets[sets.length - 1].detail.team_name)
      .to.be.a('string')
      .and.not.equal('');
  });

  it('400 naming the unknown alias, and the list is unchanged', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const url = `${cp.url}/v1/teams/${team}/models`;
    await ok(url, { method: 'PUT', token: org.console_token, body: { models: ['tg/haiku'] } });
    const res = await call(url, { method: 'PUT', token: org.console_token, body: { models: ['tg/sonnet', 'tg/opus-99'] } });
    expect(res.status).to.equal(400);
    expect(res.body.detail).to.include('"tg/opus-99"');
    expect(res.body.detail).not.to.include('"tg/sonnet"');
    expect(await ok(url, { token: org.console_token })).to.deep.equal({ models: ['tg/haiku'], stale_models: [] });
  });

  it('400 naming the field for a missing list, a string, non-string items and unknown fields', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const url = `${cp.url}/v1/teams/${team}/models`;
    for (const body of [{}, { models: 'tg/sonnet' }, { models: [1] }, { models: [''] }]) {
      const res = await call(url, { method: 'PUT', token: org.console_token, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.detail).to.include('models');
    }
    const extra = await call(url, { method: 'PUT', token: org.console_token, body: { models: [], mode: 'append' } });
    expect(extra.status).to.equal(400);
    expect(extra.body.detail).to.include('mode');
  });

  it('403 for a member setting model access', async () => {
    const org = await seedOrg(cp.deps);
    const team = await newTeam(org);
    const m = await addMember(cp.deps, org.org_id);
    const res = await call(`${cp.url}/v1/teams/${team}/models`, { method: 'PUT', token: m.token, body: { models: ['tg/sonnet'] } });
    expect(res.status).to.equal(403);
    expect(await ok(`${cp.url}/v1/teams/${team}/models`, { token: m.token })).to.deep.equal({ models: [], stale_models: [] });
  });

  it("404 for another org's team, an unknown team and a malformed id", async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    const otherTeam = await newTeam(other);
    for (const t of [otherTeam, '00000000-0000-0000-0000-000000000000', 'team-1']) {
      expect((await call(`${cp.url}/v1/teams/${t}/models`, { token: org.console_token })).status, t).to.equal(404);
      const put = await call(`${cp.url}/v1/teams/${t}/models`, { method: 'PUT', token: org.console_token, body: { models: ['tg/sonnet'] } });
      expect(put.status, t).to.equal(404);
    }
    expect(await ok(`${cp.url}/v1/teams/${otherTeam}/models`, { token: other.console_token })).to.deep.equal({ models: [], stale_models: [] });
  });
});
