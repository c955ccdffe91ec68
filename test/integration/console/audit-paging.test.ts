import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { audit_insert } from '../../../control-plane/stores/audit.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';

/** Security finding 10: the audit log was capped at 500 rows with no paging, and any member could flood it with session.open. */
describeEachStore('console API: the audit log pages, and sign-ins cannot flood it', (store) => {
  let cp: TestControlPlane;
  let org: BootstrapResult;
  let other: BootstrapResult;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    org = await seedOrg(cp.deps);
    other = await seedOrg(cp.deps);
    for (let i = 0; i < 12; i++) {
      const row = { actor: 'test', action: `test.${i}`, target_type: 'org', now: new Date() };
      await audit_insert(store.db, { ...row, org_id: org.org_id, target_id: org.org_id });
      await audit_insert(store.db, { ...row, org_id: other.org_id, target_id: other.org_id });
    }
  });
  after(() => cp.close());

  const auditUrl = (o: BootstrapResult, q: string) => `${cp.url}/v1/orgs/${o.org_id}/audit?${q}`;

  it('pages newest first with a cursor until every row of this org was seen once', async () => {
    const all = await call(auditUrl(org, 'limit=500'), { token: org.console_token });
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(auditUrl(org, `limit=5${cursor ? `&cursor=${cursor}` : ''}`), { token: org.console_token });
      expect(page.status).to.equal(200);
      expect(page.body.length).to.be.at.most(5);
      seen.push(...page.body.map((r: { id: number }) => r.id));
      cursor = page.headers.get('x-next-cursor');
      if (cursor) expect(page.headers.get('link')).to.include(`cursor=${cursor}>; rel="next"`);
    } while (cursor);
    expect(seen).to.deep.equal(all.body.map((r: { id: number }) => r.id));
    expect(new Set(seen).size).to.equal(seen.length);
  });

  it("another org's cursor pages only this org's rows, and a forged cursor is 400", async () => {
    const theirs = await call(auditUrl(other, 'limit=1'), { token: other.console_token });
    const cursor = theirs.headers.get('x-next-cursor')!;
    const page = await call(auditUrl(org, `limit=500&cursor=${cursor}`), { token: org.console_token });
    expect(page.status).to.equal(200);
    for (const r of page.body) expect(r.target_id === other.org_id).to.equal(false);
    expect((await call(auditUrl(org, 'cursor=bm9wZQ'), { token: org.console_token })).status).to.equal(400);
  });

  it('twenty sign-ins by one person in a row leave one session.open row', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${cp.url}/v1/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: org.console_token }),
      });
      expect(res.status).to.equal(204);
    }
    const rows = await call(auditUrl(org, 'limit=500'), { token: org.console_token });
    expect(rows.body.filter((r: { action: string }) => r.action === 'session.open')).to.have.length(1);
  });
});
