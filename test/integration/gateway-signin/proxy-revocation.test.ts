import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { creditWorkspace, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { seedScimOrg, PATCH_OP } from '../../support/scim.js';
import { seedSigninOrg, signIn } from '../../support/gateway-signin.js';
import { seedUser } from '../sso/helpers.js';
import { call } from '../../support/control-plane.js';
import { team_models_replace } from '../../../control-plane/stores/teams.js';
import type { RunningProxy } from '../../../proxy/runtime.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describeEachStore('gateway sign-in: the access token at the proxy', (store) => {
  let dp: DataPlane;
  let pushOnly: RunningProxy;
  let pollOnly: RunningProxy;
  before(async () => {
    dp = await startDataPlane(store, {
      // Keys stay fresh for an hour: only the change feed can make these proxies notice a revocation.
      env: { PROXY_KEY_FRESH_MS: '3600000' },
      proxies: [{ env: { PROXY_VERSION_POLL_MS: '3600000' } }, { env: { PROXY_VERSION_POLL_MS: '500' }, changePush: false }],
    });
    [pushOnly, pollOnly] = dp.proxies as [RunningProxy, RunningProxy];
  });
  after(() => dp.close());

  it('calls as Claude Code does (Authorization: Bearer), billed to the developer; SCIM deactivation refuses it at every proxy within 2 s', async () => {
    const { org, teamId } = await seedSigninOrg(dp.cp);
    await dp.cp.deps.db.transaction((tx) => team_models_replace(tx, teamId, ['tg/sonnet']));
    await creditWorkspace(dp.cp.deps, org.workspace_id, 10);
    const scim = await seedScimOrg(dp.cp, org);
    const dev = await seedUser(dp.cp.deps, org.org_id, { user_name: `dev-${process.pid}-${Date.now()}@example.test` });
    // No interval to wait out: the grant is approved before its first poll, and only a second poll of a
    // pending grant is held to the interval (device-flow.test.ts pins that on a fake clock).
    const tokens = await signIn(dp.cp, dev.token, () => undefined);
    const callAs = (p: RunningProxy) =>
      edgeCall(p.url, 'messages', org.workspace_slug, tokens.access_token, modelBody('messages'), { keyHeader: 'authorization' });
    for (const p of [pushOnly, pollOnly]) expect((await callAs(p)).status).to.equal(200);
    // Billed to the developer's own sign-in key (the ledger settles asynchronously).
    const spendOf = async () =>
      (
        await dp.cp.deps.db.query<{ spend: number }>(
          `SELECT COALESCE(sum(spend_usd), 0)::float8 AS spend FROM api_keys WHERE gateway_session_id IS NOT NULL AND owner_user_id = $1`,
          [dev.userId],
        )
      )[0]!.spend;
    const billedBy = Date.now() + 5000;
    while ((await spendOf()) === 0 && Date.now() < billedBy) await sleep(100);
    expect(await spendOf()).to.be.greaterThan(0);

    const off = await scim.scim('PATCH', `/Users/${dev.userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    expect(off.status).to.equal(200);
    for (const p of [pushOnly, pollOnly]) {
      const startedAt = Date.now();
      let status = 0;
      while (Date.now() - startedAt <= 2000 && (status = (await callAs(p)).status) !== 401) await sleep(50);
      expect(status, 'refused within 2 s').to.equal(401);
    }
  });
});

describeEachStore('gateway sign-in: through the proxy address Claude Code is given', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store);
  });
  after(() => dp.close());

  it('the proxy passes {base}/.well-known/oauth-authorization-server and {base}/oauth/* to the control plane, errors and all', async () => {
    const { org } = await seedSigninOrg(dp.cp);
    const base = `${dp.proxy.url}/${org.workspace_slug}/anthropic`;
    const discovery = await call(`${base}/.well-known/oauth-authorization-server`);
    expect(discovery.status).to.equal(200);
    expect(discovery.body.token_endpoint).to.equal(`${dp.cp.url}/oauth/token`);
    const post = (path: string, fields: Record<string, string>) =>
      call(`${base}${path}`, {
        method: 'POST',
        body: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'claude-cli/2.1.332 (external, cli)' },
      });
    const started = await post('/oauth/device_authorization', { surface: 'claude_code' });
    expect(started.status).to.equal(200);
    expect(started.body.verification_uri).to.equal(`${dp.cp.url}/oauth/device`);
    const pending = await post('/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code });
    expect(pending.status).to.equal(400);
    expect(pending.body.error).to.equal('authorization_pending');
    expect(pending.headers.get('cache-control')).to.equal('no-store');
  });
});
