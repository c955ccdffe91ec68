import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember } from '../../support/console.js';
import { audit_list } from '../../../control-plane/stores/audit.js';

/** `POST /v1/auth/session`: the console page trades a console token for its own httpOnly session cookie. */
describeEachStore('console sign-in: token to session cookie', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(async () => {
    await cp.close();
  });

  const signIn = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${cp.url}/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  function sessionCookie(res: Response): { value: string; attrs: string[] } {
    const line = res.headers.getSetCookie().find((c) => c.startsWith('tollgate_session='));
    expect(line, 'a tollgate_session cookie').to.be.a('string');
    const [pair, ...attrs] = line!.split(';').map((p) => p.trim());
    return { value: pair!.slice('tollgate_session='.length), attrs: attrs.map((a) => a.toLowerCase()) };
  }

  it('204 with an httpOnly, SameSite=Lax cookie holding a new session (not the token), audited as session.open', async () => {
    const org = await seedOrg(cp.deps);
    const res = await signIn({ token: org.console_token });
    expect(res.status).to.equal(204);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const cookie = sessionCookie(res);
    expect(cookie.value).to.match(/^tgs_/).and.not.equal(org.console_token);
    expect(cookie.attrs).to.include('httponly').and.include('samesite=lax').and.include('path=/');
    expect(cookie.attrs.some((a) => a.startsWith('expires='))).to.equal(true);
    expect(cookie.attrs).to.not.include('secure');

    const me = await call(`${cp.url}/v1/me`, { headers: { cookie: `tollgate_session=${cookie.value}` } });
    expect(me.status).to.equal(200);
    expect(me.body.user_id).to.equal(org.owner_user_id);
    const audit = await audit_list(store.db, org.org_id);
    expect(audit.filter((a) => a.action === 'session.open')).to.have.length(1);
  });

  it('signing out of the cookie session leaves the console token working', async () => {
    const org = await seedOrg(cp.deps);
    const { value } = sessionCookie(await signIn({ token: org.console_token }));
    const out = await call(`${cp.url}/v1/auth/logout`, {
      method: 'POST',
      headers: { cookie: `tollgate_session=${value}`, 'content-type': 'application/json' },
    });
    expect(out.status).to.equal(204);
    expect((await call(`${cp.url}/v1/me`, { headers: { cookie: `tollgate_session=${value}` } })).status).to.equal(401);
    expect((await call(`${cp.url}/v1/me`, { token: org.console_token })).status).to.equal(200);
  });

  it('401 problem+json for an unknown, malformed or deprovisioned token, and no cookie', async () => {
    const org = await seedOrg(cp.deps);
    const gone = await addMember(cp.deps, org.org_id, { status: 'inactive' });
    for (const token of ['tgs_000000000000000000000000000000000000', 'nonsense', gone.token]) {
      const res = await signIn({ token });
      expect(res.status, token).to.equal(401);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(res.headers.getSetCookie().some((c) => c.startsWith('tollgate_session='))).to.equal(false);
      const body = (await res.json()) as { detail: string };
      expect(body.detail).to.not.include(token);
    }
    const inactive = (await (await signIn({ token: gone.token })).json()) as { detail: string };
    expect(inactive.detail).to.match(/inactive/);
  });

  it('400 for a form post, a body that is not JSON, a missing token or an unknown field', async () => {
    const org = await seedOrg(cp.deps);
    const form = await fetch(`${cp.url}/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${org.console_token}`,
    });
    expect(form.status).to.equal(400);
    expect((await signIn('{not json')).status).to.equal(400);
    expect((await signIn({})).status).to.equal(400);
    expect((await signIn({ token: org.console_token, role: 'owner' })).status).to.equal(400);
  });

  it('the cookie is Secure when PUBLIC_BASE_URL is https', async () => {
    const org = await seedOrg(cp.deps);
    const saved = cp.deps.config.publicBaseUrl;
    cp.deps.config.publicBaseUrl = 'https://console.example.test';
    try {
      const res = await signIn({ token: org.console_token });
      expect(res.status).to.equal(204);
      expect(sessionCookie(res).attrs).to.include('secure');
    } finally {
      cp.deps.config.publicBaseUrl = saved;
    }
  });
});
