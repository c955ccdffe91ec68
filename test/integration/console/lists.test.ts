import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { team_models_replace } from '../../../control-plane/stores/teams.js';
import { staleGrantWarnings } from '../../../control-plane/services/workspaces/teams.js';

/** The lists that need context: teams with their numbers, keys across teams, the audit log filtered; grants gone stale. */
describeEachStore('console: teams, keys across teams, audit filters, stale grants', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  async function setup() {
    const org = await seedOrg(cp.deps);
    const owner = { token: org.console_token };
    const m = await addMember(cp.deps, org.org_id);
    const team = async (name: string) =>
      (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { ...owner, body: { name } }, 201)).id as string;
    const alpha = await team('Alpha');
    const beta = await team('Beta');
    await call(`${cp.url}/v1/teams/${alpha}/members`, { ...owner, body: { user_id: m.user_id } });
    await ok(`${cp.url}/v1/teams/${alpha}/models`, { ...owner, method: 'PUT', body: { models: ['tg/sonnet'] } });
    const key = async (teamId: string, token: string, kind: string) =>
      (await ok(`${cp.url}/v1/teams/${teamId}/keys`, { token, body: { kind, name: `${kind} key` } }, 201)).id as string;
    const keys = {
      alphaPersonal: await key(alpha, m.token, 'personal'),
      alphaTeam: await key(alpha, org.console_token, 'team'),
      beta: await key(beta, org.console_token, 'team'),
    };
    await cp.deps.db.query(`UPDATE api_keys SET spend_usd = 1.25 WHERE id = $1`, [keys.alphaTeam]);
    return { org, owner, m, alpha, beta, keys };
  }

  it('teams list their member count, models (stale ones named) and spend', async () => {
    const { org, owner, alpha, beta } = await setup();
    // An alias the models file no longer has (it was removed after the grant).
    await team_models_replace(cp.deps.db, alpha, ['tg/gone', 'tg/sonnet']);
    const teams = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, owner);
    expect(teams).to.deep.equal([
      { id: alpha, name: 'Alpha', member_count: 1, models: ['tg/gone', 'tg/sonnet'], stale_models: ['tg/gone'], spend_usd: 1.25 },
      { id: beta, name: 'Beta', member_count: 0, models: [], stale_models: [], spend_usd: 0 },
    ]);
    expect(await ok(`${cp.url}/v1/teams/${alpha}/models`, owner)).to.deep.equal({ models: ['tg/gone', 'tg/sonnet'], stale_models: ['tg/gone'] });
    const warnings = await staleGrantWarnings(cp.deps.db, cp.deps.config.models);
    expect(warnings.filter((w) => w.includes(`org "${org.org_slug}"`))).to.deep.equal([
      `warning: team "Alpha" of workspace "${org.workspace_slug}" (org "${org.org_slug}") is granted "tg/gone", which is not in the models file; ` +
        'it grants nothing now and access returns if the alias is added again. Remove it under Teams → Model access.',
    ]);
  });

  it('keys across teams: an admin sees all (or one team’s), a member only their teams’', async () => {
    const { org, owner, m, beta, keys } = await setup();
    const url = `${cp.url}/v1/workspaces/${org.workspace_id}/keys`;
    const all = await ok(url, owner);
    expect(all.map((k: { id: string }) => k.id)).to.have.members(Object.values(keys));
    expect(all.find((k: { id: string }) => k.id === keys.beta)).to.include({ team_id: beta, team_name: 'Beta' });
    expect(all.every((k: Record<string, unknown>) => !('key' in k) && !('key_hash' in k))).to.equal(true);
    expect((await ok(`${url}?team_id=${beta}`, owner)).map((k: { id: string }) => k.id)).to.deep.equal([keys.beta]);
    expect((await ok(url, { token: m.token })).map((k: { id: string }) => k.id)).to.have.members([keys.alphaPersonal, keys.alphaTeam]);
    expect((await ok(`${url}?team_id=${beta}`, { token: m.token })).length).to.equal(0);
    expect((await call(`${url}?team_id=nope`, owner)).status).to.equal(400);
    expect((await call(`${cp.url}/v1/workspaces/${(await seedOrg(cp.deps)).workspace_id}/keys`, owner)).status).to.equal(404);
  });

  it('the audit log filters by action (exact or family), actor and time', async () => {
    const { org, owner, m } = await setup();
    const url = `${cp.url}/v1/orgs/${org.org_id}/audit`;
    const actions = (rows: { action: string }[]) => rows.map((r) => r.action);
    expect(actions(await ok(`${url}?action=key.create`, owner))).to.deep.equal(['key.create', 'key.create', 'key.create']);
    expect(actions(await ok(`${url}?action=team.`, owner))).to.have.members(['team.create', 'team.create', 'team.member_add', 'team.models_set']);
    const byMember = await ok(`${url}?actor=${encodeURIComponent(`user:${m.user_id}`)}`, owner);
    expect(actions(byMember)).to.deep.equal(['key.create']);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect(await ok(`${url}?since=${encodeURIComponent(future)}`, owner)).to.deep.equal([]);
    expect((await ok(`${url}?until=${encodeURIComponent(future)}&limit=2`, owner)).length).to.equal(2);
    expect((await call(`${url}?action=DROP%20TABLE`, owner)).status).to.equal(400);
    expect((await call(`${url}?since=yesterday`, owner)).status).to.equal(400);
  });
});
