import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { DEVICE_GRANT, seedSigninOrg, signIn as signInFlow, signinClient } from '../../support/gateway-signin.js';
import { seedScimOrg, PATCH_OP } from '../../support/scim.js';
import { sha256Hex } from '../../../shared/secrets.js';
import { api_key_resolve } from '../../../control-plane/stores/api-keys.js';
import { seedUser } from '../sso/helpers.js';

describeEachStore('gateway sign-in: device flow (RFC 8628) and refresh (RFC 6749 §6)', (store) => {
  let cp: TestControlPlane;
  // The store's clock only: expiry and poll intervals are compared with the times it writes.
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => (offsetMs += ms) };
  before(async () => {
    cp = await startTestControlPlane(store.db, { clock });
  });
  after(() => cp.close());

  // cp exists once before() has run: each call asks for a client of it.
  const form = (...a: Parameters<ReturnType<typeof signinClient>['form']>) => signinClient(cp).form(...a);
  const start = () => signinClient(cp).start();
  const poll = (deviceCode: string) => signinClient(cp).poll(deviceCode);
  const refresh = (token: string) => signinClient(cp).refresh(token);
  const decide = (...a: Parameters<ReturnType<typeof signinClient>['decide']>) => signinClient(cp).decide(...a);
  const signinOrg = () => seedSigninOrg(cp);
  /** What the proxy would be told of a token now. */
  const resolveToken = (token: string) => api_key_resolve(cp.deps.db, sha256Hex(token), clock.now());
  const signIn = (consoleToken: string) => signInFlow(cp, consoleToken, () => void clock.advance(5000));

  it('discovery names the device authorization, token and revocation endpoints on this origin', async () => {
    const res = await call(`${cp.url}/.well-known/oauth-authorization-server`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({
      issuer: cp.url,
      device_authorization_endpoint: `${cp.url}/oauth/device_authorization`,
      token_endpoint: `${cp.url}/oauth/token`,
      revocation_endpoint: `${cp.url}/oauth/revoke`,
    });
    expect(res.body.grant_types_supported).to.deep.equal([DEVICE_GRANT, 'refresh_token']);
  });

  it('device authorization answers the fields Claude Code parses, a high-entropy device code and an XXXX-XXXX user code', async () => {
    const res = await start();
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body.device_code).to.match(/^tgd_/);
    expect(res.body.user_code).to.match(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(res.body.verification_uri).to.equal(`${cp.url}/oauth/device`);
    expect(res.body.verification_uri_complete).to.equal(`${cp.url}/oauth/device?user_code=${res.body.user_code}`);
    expect(res.body).to.include({ expires_in: 600, interval: 5 });
  });

  it('authorization_pending until confirmed, slow_down when polled faster than the interval, then tokens once', async () => {
    const { org } = await signinOrg();
    const started = await start();
    clock.advance(5000);
    const pending = await poll(started.body.device_code);
    expect(pending.status).to.equal(400);
    expect(pending.body.error).to.equal('authorization_pending');
    clock.advance(1000);
    expect((await poll(started.body.device_code)).body.error).to.equal('slow_down');
    expect((await decide(org.console_token, started.body.user_code.toLowerCase(), 'approve')).status).to.equal(200);
    clock.advance(10_000);
    const tokens = await poll(started.body.device_code);
    expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
    expect(tokens.body.access_token).to.match(/^tgk_/);
    expect(tokens.body.refresh_token).to.match(/^tgr_/);
    expect(tokens.body).to.include({ token_type: 'Bearer', expires_in: 3600, email: `owner@${org.org_slug}.test` });
    // Single-use: the same device code never mints a second session.
    clock.advance(10_000);
    expect((await poll(started.body.device_code)).body.error).to.equal('invalid_grant');
  });

  it('slow_down raises the interval for the rest of the grant (RFC 8628 §3.5): 5 s later is still too soon, 10 s later is pending', async () => {
    await signinOrg();
    const started = await start();
    clock.advance(5000);
    expect((await poll(started.body.device_code)).body.error).to.equal('authorization_pending');
    clock.advance(1000);
    expect((await poll(started.body.device_code)).body.error).to.equal('slow_down');
    clock.advance(5000);
    expect((await poll(started.body.device_code)).body.error).to.equal('slow_down');
    clock.advance(15_000);
    expect((await poll(started.body.device_code)).body.error).to.equal('authorization_pending');
  });

  /** The reasons the audit log gives for the session's refused refreshes. */
  const refreshFailures = async (org: { org_id: string; console_token: string }) => {
    const audit = await call(`${cp.url}/v1/orgs/${org.org_id}/audit?action=gateway_session.refresh_failure`, { token: org.console_token });
    return (audit.body.items ?? audit.body).map((e: { detail: { reason: string } }) => e.detail.reason);
  };

  it('a refresh after the 30-day session has ended is refused with invalid_grant, audited as expired', async () => {
    const { org } = await signinOrg();
    const tokens = await signIn(org.console_token);
    const month = 30 * 24 * 3600 * 1000 + 1000;
    clock.advance(month);
    const late = await refresh(tokens.refresh_token);
    // Back again: the owner's console session (for the audit log) has not lived a month.
    clock.advance(-month);
    expect(late.status).to.equal(400);
    expect(late.body.error).to.equal('invalid_grant');
    expect(await refreshFailures(org)).to.deep.equal(['expired']);
  });

  it("a refresh after an admin's revoke is refused with invalid_grant, audited as revoked", async () => {
    const { org } = await signinOrg();
    const tokens = await signIn(org.console_token);
    const revoked = await call(`${cp.url}/v1/orgs/${org.org_id}/members/${org.owner_user_id}/devices/revoke`, {
      method: 'POST',
      token: org.console_token,
    });
    expect(revoked.body).to.deep.equal({ revoked: 1 });
    expect((await refresh(tokens.refresh_token)).body.error).to.equal('invalid_grant');
    expect(await refreshFailures(org)).to.deep.equal(['revoked']);
  });

  it('the access token resolves like a personal key of the user, in the sign-in team, with the default budget', async () => {
    const { org, teamId } = await signinOrg();
    const tokens = await signIn(org.console_token);
    const row = await resolveToken(tokens.access_token);
    expect(row).to.include({
      org_id: org.org_id,
      workspace_id: org.workspace_id,
      team_id: teamId,
      owner_user_id: org.owner_user_id,
      revoked_at: null,
    });
    expect(row!.key_remaining_micros).to.equal(25_000_000);
  });

  it('access_denied when the developer denies the code in the browser', async () => {
    const { org } = await signinOrg();
    const started = await start();
    expect((await decide(org.console_token, started.body.user_code, 'deny')).status).to.equal(200);
    clock.advance(5000);
    expect((await poll(started.body.device_code)).body.error).to.equal('access_denied');
  });

  it('expired_token once the device code is older than expires_in, and the code page refuses its user code', async () => {
    const { org } = await signinOrg();
    const started = await start();
    clock.advance(601_000);
    expect((await poll(started.body.device_code)).body.error).to.equal('expired_token');
    const late = await decide(org.console_token, started.body.user_code, 'approve');
    expect(late.status).to.equal(400);
    expect(late.body).to.include('unknown or has expired');
  });

  it('invalid_grant for an unknown device code; unsupported_grant_type and invalid_request for malformed requests', async () => {
    expect((await poll('tgd_nothing')).body.error).to.equal('invalid_grant');
    expect((await form('/oauth/token', { grant_type: 'password' })).body.error).to.equal('unsupported_grant_type');
    expect((await form('/oauth/token', { grant_type: DEVICE_GRANT })).body.error).to.equal('invalid_request');
    const json = await call(`${cp.url}/oauth/token`, { body: { grant_type: DEVICE_GRANT, device_code: 'x' } });
    expect(json.status).to.equal(400);
    expect(json.body.error).to.equal('invalid_request');
  });

  it('the code page refuses a confirmation posted from another site (CSRF) and cannot be framed', async () => {
    const { org } = await signinOrg();
    const started = await start();
    const forged = await decide(org.console_token, started.body.user_code, 'approve', 'https://evil.example');
    expect(forged.status).to.equal(403);
    const page = await call(`${cp.url}/oauth/device?user_code=${started.body.user_code}`, {
      headers: { cookie: `tollgate_session=${org.console_token}` },
    });
    expect(page.status).to.equal(200);
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
    expect(page.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    clock.advance(5000);
    expect((await poll(started.body.device_code)).body.error).to.equal('authorization_pending');
  });

  it("a refresh rotates both tokens on the session's one key (spend and budget stay the device's) and retires the previous access token", async () => {
    const { org } = await signinOrg();
    const first = await signIn(org.console_token);
    const firstKeyId = (await resolveToken(first.access_token))!.id;
    const second = await refresh(first.refresh_token);
    expect(second.status, JSON.stringify(second.body)).to.equal(200);
    expect(second.body.refresh_token).to.not.equal(first.refresh_token);
    expect(second.body.access_token).to.not.equal(first.access_token);
    // One key for the device's session: the new secret resolves to it, the old one to nothing.
    const before = await resolveToken(first.access_token);
    expect(before, 'the first access token after the refresh').to.equal(undefined);
    const after = (await resolveToken(second.body.access_token))!;
    expect(after.revoked_at).to.equal(null);
    expect(after.id).to.equal(firstKeyId);
  });

  it('a reused refresh token is refused with invalid_grant and ends the whole family, audited', async () => {
    const { org } = await signinOrg();
    const first = await signIn(org.console_token);
    const second = await refresh(first.refresh_token);
    const reuse = await refresh(first.refresh_token);
    expect(reuse.status).to.equal(400);
    expect(reuse.body.error).to.equal('invalid_grant');
    // The thief's reuse also ends the legitimate holder's rotated tokens.
    expect((await resolveToken(second.body.access_token))!.revoked_at).to.not.equal(null);
    expect((await refresh(second.body.refresh_token)).body.error).to.equal('invalid_grant');
    const audit = await call(`${cp.url}/v1/orgs/${org.org_id}/audit?action=gateway_session.`, { token: org.console_token });
    const actions = (audit.body.items ?? audit.body).map((e: { action: string }) => e.action);
    expect(actions).to.include.members(['gateway_session.sign_in', 'gateway_session.refresh_failure']);
  });

  it('SCIM deactivation ends the session: its access key is revoked and refresh is refused', async () => {
    const { org } = await signinOrg();
    const scim = await seedScimOrg(cp, org);
    const dev = await seedUser(cp.deps, org.org_id, { user_name: `dev-${Date.now()}@example.test`, email: 'dev@example.test' });
    const tokens = await signIn(dev.token);
    const off = await scim.scim('PATCH', `/Users/${dev.userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    expect(off.status, JSON.stringify(off.body)).to.equal(200);
    expect((await resolveToken(tokens.access_token))!.revoked_at).to.not.equal(null);
    expect((await refresh(tokens.refresh_token)).body.error).to.equal('invalid_grant');
  });

  it('SCIM deletion ends the session first: the access key is revoked, not left live without its user', async () => {
    const { org } = await signinOrg();
    const scim = await seedScimOrg(cp, org);
    const dev = await seedUser(cp.deps, org.org_id, { user_name: `gone-${Date.now()}@example.test` });
    const tokens = await signIn(dev.token);
    expect((await scim.scim('DELETE', `/Users/${dev.userId}`)).status).to.equal(204);
    expect((await resolveToken(tokens.access_token))!.revoked_at).to.not.equal(null);
  });

  it('console: a member sees their devices and revokes one; RFC 7009 revocation ends the session too', async () => {
    const { org } = await signinOrg();
    const a = await signIn(org.console_token);
    const b = await signIn(org.console_token);
    const devices = await call(`${cp.url}/v1/orgs/${org.org_id}/members/${org.owner_user_id}/devices`, { token: org.console_token });
    expect(devices.status).to.equal(200);
    expect(devices.body).to.have.length(2);
    expect(devices.body[0].client_version).to.equal('claude-cli/2.1.332 (external, cli)');
    const one = await call(`${cp.url}/v1/orgs/${org.org_id}/members/${org.owner_user_id}/devices/${devices.body[0].id}/revoke`, {
      method: 'POST',
      token: org.console_token,
    });
    expect(one.body).to.deep.equal({ revoked: 1 });
    expect((await form('/oauth/revoke', { token: a.refresh_token, token_type_hint: 'refresh_token' })).status).to.equal(200);
    for (const t of [a, b]) expect((await resolveToken(t.access_token))!.revoked_at).to.not.equal(null);
  });
});

describeEachStore('gateway sign-in: guesses at user codes are limited per address', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db, { env: { AUTH_RATE_LIMIT_PER_IP_PER_MINUTE: '3' } });
  });
  after(() => cp.close());

  it('the fourth confirmation within a minute from one address is refused 429, whatever the code', async () => {
    const org = await seedOrg(cp.deps);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await signinClient(cp).decide(org.console_token, 'BCDF-GHJK', 'approve')).status);
    expect(statuses).to.deep.equal([400, 400, 400, 429]);
  });
});
