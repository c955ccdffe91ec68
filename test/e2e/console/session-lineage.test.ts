import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { audit_list } from '../../../control-plane/stores/audit.js';
import { sha256Hex } from '../../../shared/secrets.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';

/** Security finding 9: sessions renewed forever, outlived their parent, and could not all be ended. */
describeEachStore('console sessions: traded only from tokens, bounded by and revoked with the parent', (store) => {
  let cp: TestControlPlane;
  let org: BootstrapResult;
  before(async () => {
    cp = await startTestControlPlane(store.db, { env: { SESSION_TTL_SECONDS: '3600' } });
    org = await seedOrg(cp.deps);
  });
  after(() => cp.close());

  async function trade(token: string): Promise<{ status: number; cookie: string | undefined; detail?: string }> {
    const res = await fetch(`${cp.url}/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    const line = res.headers.getSetCookie().find((c) => c.startsWith('tollgate_session='));
    const body = res.status === 204 ? undefined : ((await res.json()) as { detail: string });
    return { status: res.status, cookie: line?.split(';')[0]!.slice('tollgate_session='.length), detail: body?.detail };
  }
  const expiry = async (token: string) =>
    (await store.db.query<{ expires_at: Date }>(`SELECT expires_at FROM console_sessions WHERE token_hash = $1`, [sha256Hex(token)]))[0]!.expires_at;
  const me = (token: string) => call(`${cp.url}/v1/me`, { token });

  it('a browser session cannot be traded for a fresh one (403), only a console token can', async () => {
    const child = await trade(org.console_token);
    expect(child.status).to.equal(204);
    const again = await trade(child.cookie!);
    expect(again.status).to.equal(403);
    expect(again.detail).to.match(/Only a console token/);
  });

  it('a traded session expires no later than its parent token', async () => {
    // A token close to its end: its child must end with it, not a full TTL later.
    const soon = new Date(Date.now() + 60_000);
    await store.db.query(`UPDATE console_sessions SET expires_at = $2 WHERE token_hash = $1`, [sha256Hex(org.console_token), soon]);
    const child = await trade(org.console_token);
    expect(child.status).to.equal(204);
    expect(new Date(await expiry(child.cookie!)).getTime()).to.be.at.most(soon.getTime());
  });

  it('signing the parent token out ends its children; an unrelated session stays', async () => {
    const other = await seedOrg(cp.deps);
    const child = await trade(other.console_token);
    const unrelated = await trade(org.console_token);
    expect((await me(child.cookie!)).status).to.equal(200);
    expect((await call(`${cp.url}/v1/auth/logout`, { method: 'POST', token: other.console_token })).status).to.equal(204);
    expect((await me(child.cookie!)).status, 'the child ended with its parent').to.equal(401);
    expect((await me(unrelated.cookie!)).status).to.equal(200);
  });

  it('sign out everywhere ends every session and token of the caller in the org, audited', async () => {
    const third = await seedOrg(cp.deps);
    const a = await trade(third.console_token);
    const b = await trade(third.console_token);
    const res = await call(`${cp.url}/v1/auth/logout-all`, {
      method: 'POST',
      headers: { cookie: `tollgate_session=${a.cookie!}`, 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(200);
    expect(res.body.sessions_ended).to.equal(3);
    for (const t of [a.cookie!, b.cookie!, third.console_token]) expect((await me(t)).status).to.equal(401);
    expect((await me(org.console_token)).status, "another org's owner is untouched").to.equal(200);
    const audit = await audit_list(store.db, third.org_id, 100);
    expect(audit.find((r) => r.action === 'session.revoke_all')).to.deep.include({
      actor: `user:${third.owner_user_id}`,
      target_id: third.owner_user_id,
    });
  });
});
