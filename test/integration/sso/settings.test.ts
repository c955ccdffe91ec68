import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, testConfig, type TestControlPlane } from '../../support/control-plane.js';
import { createSecretSealer } from '../../../control-plane/services/sso/secrets.js';
import { clientSecretContext } from '../../../control-plane/services/sso/settings.js';
import { seedUser } from './helpers.js';

const VALID = { issuer: 'https://idp.example.com/oauth2/default', client_id: 'tollgate-console', client_secret: 'S3cr3t-value-that-must-never-leak' };

describeEachStore('sso: settings API', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  const put = (orgId: string, token: string, body: unknown) => call(`${cp.url}/v1/orgs/${orgId}/sso`, { method: 'PUT', token, body });

  it('200 saves the settings and answers {issuer, client_id, external_id_claim} without the secret; GET answers the same', async () => {
    const org = await seedOrg(cp.deps);
    const saved = await put(org.org_id, org.console_token, { ...VALID, external_id_claim: 'oid' });
    expect(saved.status).to.equal(200);
    expect(saved.body).to.deep.equal({ issuer: VALID.issuer, client_id: VALID.client_id, external_id_claim: 'oid' });
    const shown = await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { token: org.console_token });
    expect(shown.status).to.equal(200);
    expect(shown.body).to.deep.equal(saved.body);
  });

  it('external_id_claim defaults to sub, and a second PUT replaces the settings', async () => {
    const org = await seedOrg(cp.deps);
    await put(org.org_id, org.console_token, { ...VALID, external_id_claim: 'oid' });
    const res = await put(org.org_id, org.console_token, { ...VALID, client_id: 'renamed' });
    expect(res.body).to.deep.equal({ issuer: VALID.issuer, client_id: 'renamed', external_id_claim: 'sub' });
  });

  it('an org id in upper case names the same org on /sso, /scim, /members and /workspaces', async () => {
    const org = await seedOrg(cp.deps);
    const upper = org.org_id.toUpperCase();
    expect((await put(upper, org.console_token, VALID)).status).to.equal(200);
    for (const path of ['sso', 'scim', 'members', 'workspaces']) {
      const res = await call(`${cp.url}/v1/orgs/${upper}/${path}`, { token: org.console_token });
      expect(res.status, path).to.equal(200);
    }
  });

  it('404 problem+json from GET when SSO is not configured', async () => {
    const org = await seedOrg(cp.deps);
    const res = await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { token: org.console_token });
    expect(res.status).to.equal(404);
    expect(res.headers.get('content-type')).to.include('application/problem+json');
  });

  it('accepts http issuers on loopback only (tests and local IdPs)', async () => {
    const org = await seedOrg(cp.deps);
    for (const issuer of ['http://127.0.0.1:8443', 'http://localhost:9000/realms/dev']) {
      expect((await put(org.org_id, org.console_token, { ...VALID, issuer })).status, issuer).to.equal(200);
    }
  });

  it('400 problem+json naming the field for a bad issuer, missing or empty fields, and unknown fields', async () => {
    const org = await seedOrg(cp.deps);
    const cases: [unknown, RegExp][] = [
      [{ ...VALID, issuer: 'not a url' }, /issuer/],
      [{ ...VALID, issuer: 'https://idp.example.com/?tenant=1' }, /issuer/],
      [{ ...VALID, issuer: 'ftp://idp.example.com' }, /issuer/],
      [{ issuer: VALID.issuer, client_id: VALID.client_id }, /client_secret/],
      [{ ...VALID, client_id: '  ' }, /client_id: must not be empty/],
      [{ ...VALID, client_secret: '' }, /client_secret: must not be empty/],
      [{ ...VALID, external_id_claim: 'has space' }, /external_id_claim/],
      [{ ...VALID, extra: true }, /unknown field\(s\) "extra"/],
      ['{not json', /not valid JSON/],
    ];
    for (const [body, detail] of cases) {
      const res = await put(org.org_id, org.console_token, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.body.detail).to.match(detail);
      expect(JSON.stringify(res.body)).not.to.include(VALID.client_secret);
    }
    expect((await store.db.query('SELECT 1 FROM sso_settings WHERE org_id = $1', [org.org_id])).length).to.equal(0);
  });

  it('DELETE turns SSO off: 204, then GET and the login link answer 404, a second DELETE 404; audited', async () => {
    const org = await seedOrg(cp.deps);
    await put(org.org_id, org.console_token, VALID);
    const del = () => call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'DELETE', token: org.console_token });
    expect((await del()).status).to.equal(204);
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { token: org.console_token })).status).to.equal(404);
    const login = await fetch(`${cp.url}/v1/auth/sso/${org.org_slug}/login`, { redirect: 'manual' });
    expect(login.status).to.equal(404);
    expect(await login.text()).to.include('Single sign-on is not available');
    expect((await del()).status).to.equal(404);
    const actions = await store.db.query<{ action: string }>(`SELECT action FROM audit_log WHERE org_id = $1 AND action LIKE 'sso.%' ORDER BY id`, [
      org.org_id,
    ]);
    expect(actions.map((a) => a.action)).to.deep.equal(['sso.settings_create', 'sso.settings_delete']);
  });

  it('DELETE: 403 for a member, 404 for another organization, and the settings stay', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    await put(org.org_id, org.console_token, VALID);
    const member = await seedUser(cp.deps, org.org_id, { user_name: 'del-member@example.test', source: 'sso', role: 'member' });
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'DELETE', token: member.token })).status).to.equal(403);
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'DELETE', token: other.console_token })).status).to.equal(404);
    expect(await store.db.query('SELECT 1 FROM sso_settings WHERE org_id = $1', [org.org_id])).to.have.length(1);
  });

  it('403 for a member, 401 without a token, 404 for another organization (PUT and GET)', async () => {
    const org = await seedOrg(cp.deps);
    const other = await seedOrg(cp.deps);
    const member = await seedUser(cp.deps, org.org_id, { user_name: 'member@example.test', source: 'sso', role: 'member' });
    expect((await put(org.org_id, member.token, VALID)).status).to.equal(403);
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { token: member.token })).status).to.equal(403);
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'PUT', body: VALID })).status).to.equal(401);
    expect((await put(other.org_id, org.console_token, VALID)).status).to.equal(404);
    expect((await call(`${cp.url}/v1/orgs/${other.org_id}/sso`, { token: org.console_token })).status).to.equal(404);
    expect((await store.db.query('SELECT 1 FROM sso_settings WHERE org_id IN ($1, $2)', [org.org_id, other.org_id])).length).to.equal(0);
  });

  it("an admin may read SSO settings but not set them: 403 problem+json saying the identity provider is the owner's to set", async () => {
    const org = await seedOrg(cp.deps);
    await put(org.org_id, org.console_token, VALID);
    const admin = await seedUser(cp.deps, org.org_id, { user_name: 'admin@example.test', source: 'sso', role: 'admin' });
    const refused = await put(org.org_id, admin.token, { ...VALID, issuer: 'https://attacker.example.com' });
    expect(refused.status).to.equal(403);
    expect(refused.headers.get('content-type')).to.include('application/problem+json');
    expect(refused.body.detail).to.match(/needs the owner role: the identity provider .* decides who signs in as whom/);
    expect((await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { token: admin.token })).body.issuer).to.equal(VALID.issuer);
  });

  it('stores the client secret sealed: not in any sso_settings or audit_log row, yet it opens under the key', async () => {
    const org = await seedOrg(cp.deps);
    await put(org.org_id, org.console_token, VALID);
    const settings = await store.db.query<{ row: unknown }>('SELECT row_to_json(s) AS row FROM sso_settings s WHERE org_id = $1', [org.org_id]);
    const audit = await store.db.query<{ row: unknown }>('SELECT row_to_json(a) AS row FROM audit_log a WHERE org_id = $1', [org.org_id]);
    const dump = JSON.stringify([settings, audit]);
    expect(settings).to.have.length(1);
    expect(dump).not.to.include(VALID.client_secret);
    expect(dump).not.to.include(Buffer.from(VALID.client_secret).toString('base64').slice(0, 16));

    const [row] = await store.db.query<{ client_secret_sealed: string }>('SELECT client_secret_sealed FROM sso_settings WHERE org_id = $1', [
      org.org_id,
    ]);
    expect(row!.client_secret_sealed).to.match(/^v1\./);
    expect(createSecretSealer(cp.deps.config).unseal(row!.client_secret_sealed, clientSecretContext(org.org_id))).to.equal(VALID.client_secret);
  });

  it('writes an audit row for the change, actor user:<id>, naming the issuer and not the secret', async () => {
    const org = await seedOrg(cp.deps);
    await put(org.org_id, org.console_token, VALID);
    await put(org.org_id, org.console_token, VALID);
    const rows = await store.db.query<{ actor: string; action: string; detail: Record<string, unknown> }>(
      `SELECT actor, action, detail FROM audit_log WHERE org_id = $1 AND action LIKE 'sso.settings%' ORDER BY id`,
      [org.org_id],
    );
    expect(rows.map((r) => r.action)).to.deep.equal(['sso.settings_create', 'sso.settings_update']);
    expect(rows[0]).to.deep.include({ actor: `user:${org.owner_user_id}` });
    expect(rows[0]!.detail).to.include({ issuer: VALID.issuer, client_id: VALID.client_id, external_id_claim: 'sub' });
  });
});

describeEachStore('sso: the key that seals client secrets', (store) => {
  it('409 problem+json naming SECRETS_KEY when DATABASE_URL is set without it, and nothing is stored', async () => {
    const cp = await startTestControlPlane(store.db, { env: { SECRETS_KEY: '', DATABASE_URL: 'postgres://replica@127.0.0.1:5432/shared' } });
    try {
      const org = await seedOrg(cp.deps);
      const res = await call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'PUT', token: org.console_token, body: VALID });
      expect(res.status).to.equal(409);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.body.detail).to.include('SECRETS_KEY').and.include('replica');
      expect(await store.db.query('SELECT 1 FROM sso_settings WHERE org_id = $1', [org.org_id])).to.have.length(0);
    } finally {
      await cp.close();
    }
  });

  it('on the embedded store without SECRETS_KEY, generates DATA_DIR/secrets.key once (mode 0600) and keeps using it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-sso-'));
    const env = { SECRETS_KEY: '', DATA_DIR: dataDir };
    const cp = await startTestControlPlane(store.db, { env });
    try {
      const org = await seedOrg(cp.deps);
      const put = () => call(`${cp.url}/v1/orgs/${org.org_id}/sso`, { method: 'PUT', token: org.console_token, body: VALID });
      expect((await put()).status).to.equal(200);
      const file = join(dataDir, 'secrets.key');
      const key = readFileSync(file, 'utf8');
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      expect(Buffer.from(key.trim(), 'base64')).to.have.length(32);
      expect((await put()).status).to.equal(200);
      expect(readFileSync(file, 'utf8')).to.equal(key);

      // A restarted process (a fresh sealer over the same DATA_DIR) opens what the first one sealed.
      const [row] = await store.db.query<{ client_secret_sealed: string }>('SELECT client_secret_sealed FROM sso_settings WHERE org_id = $1', [
        org.org_id,
      ]);
      expect(createSecretSealer(testConfig(env)).unseal(row!.client_secret_sealed, clientSecretContext(org.org_id))).to.equal(VALID.client_secret);
    } finally {
      await cp.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
