import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';

/**
 * Security finding 6: a page on another origin of the same site (another
 * port of this host) used the admin's cookie to add credits, create a team
 * and rotate the SCIM token. Cookie-carried writes now need JSON and a
 * same-origin Origin; bearer callers are untouched.
 */
describeEachStore('console: cross-origin writes with the session cookie are refused', (store) => {
  let cp: TestControlPlane;
  let org: BootstrapResult;
  let cookie: string;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    org = await seedOrg(cp.deps);
    const res = await fetch(`${cp.url}/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: org.console_token }),
    });
    cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
  });
  after(() => cp.close());

  const credits = () => `${cp.url}/v1/workspaces/${org.workspace_id}/credits`;
  const rotate = () => `${cp.url}/v1/orgs/${org.org_id}/scim/token`;
  const raw = (url: string, headers: Record<string, string>, body?: string) => fetch(url, { method: 'POST', headers: { cookie, ...headers }, body });

  async function expectRefused(res: Response, detail: RegExp): Promise<void> {
    expect(res.status).to.equal(403);
    expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(((await res.json()) as { detail: string }).detail).to.match(detail);
  }

  it('a JSON body without Content-Type (or as text/plain, a simple request) is 403', async () => {
    await expectRefused(await raw(credits(), {}, JSON.stringify({ amount_usd: 5 })), /Content-Type: application\/json/);
    await expectRefused(await raw(credits(), { 'content-type': 'text/plain' }, JSON.stringify({ amount_usd: 5 })), /application\/json/);
    const [balance] = await store.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_entries WHERE kind <> 'usage'`);
    expect(balance!.n, 'no credit was added').to.equal('0');
  });

  it('a body-less POST (rotate the SCIM token) without the JSON Content-Type is 403; with it, 201', async () => {
    await expectRefused(await raw(rotate(), {}), /Content-Type/);
    const ok = await raw(rotate(), { 'content-type': 'application/json', origin: cp.url });
    expect(ok.status).to.equal(201);
  });

  it('a cross-origin Origin (another port of the same host) or Sec-Fetch-Site: same-site is 403, even with JSON', async () => {
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ amount_usd: 5 });
    await expectRefused(await raw(credits(), { ...json, origin: 'http://127.0.0.1:1' }, body), /Cross-origin/);
    await expectRefused(await raw(credits(), { ...json, origin: 'null' }, body), /Cross-origin/);
    await expectRefused(await raw(credits(), { ...json, 'sec-fetch-site': 'same-site' }, body), /Cross-origin/);
    expect((await raw(credits(), { ...json, origin: cp.url }, body)).status).to.equal(200);
    expect((await raw(credits(), { ...json, 'sec-fetch-site': 'same-origin' }, body)).status).to.equal(200);
  });

  it('a body-less DELETE from the console (JSON Content-Type, same Origin) passes the check', async () => {
    const res = await fetch(`${cp.url}/v1/keys/00000000-0000-4000-8000-000000000000`, {
      method: 'DELETE',
      headers: { cookie, 'content-type': 'application/json', origin: cp.url },
    });
    expect(res.status, 'past the CSRF check to the lookup').to.equal(404);
    await expectRefused(
      await fetch(`${cp.url}/v1/keys/00000000-0000-4000-8000-000000000000`, { method: 'DELETE', headers: { cookie } }),
      /Content-Type/,
    );
  });

  it('reads with the cookie and bearer-token writes (CLI, curl) are not affected', async () => {
    expect((await fetch(`${cp.url}/v1/me`, { headers: { cookie, origin: 'http://127.0.0.1:1' } })).status).to.equal(200);
    const bearer = await call(rotate(), { method: 'POST', token: org.console_token, headers: { origin: 'http://127.0.0.1:1' } });
    expect(bearer.status).to.equal(201);
  });
});
