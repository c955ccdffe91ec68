import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { seedKey, startTestProxy, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import type { RunningProxy } from '../../../proxy/runtime.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls until `status` comes back or `withinMs` passes; how long it took, or -1. */
async function until(withinMs: number, attempt: () => Promise<number>, status: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start <= withinMs) {
    if ((await attempt()) === status) return Date.now() - start;
    await sleep(50);
  }
  return -1;
}

/**
 * The wall clock moved by the test: it runs at the real pace from wherever
 * the test set it, and the control plane and both proxies read this one.
 */
function movableClock(startIso: string) {
  let offset = Date.parse(startIso) - Date.now();
  return {
    nowMs: () => Date.now() + offset,
    clock: { now: () => new Date(Date.now() + offset) },
    set(iso: string) {
      offset = Date.parse(iso) - Date.now();
    },
  };
}

describeEachStore('keys over time: period budgets, PATCH and rotate on two proxies', (store) => {
  const time = movableClock('2026-01-31T23:50:00Z');
  let fake: FakeUpstream;
  let cp: TestControlPlane;
  let proxies: RunningProxy[] = [];
  before(async function () {
    fake = await startFakeUpstream();
    cp = await startTestControlPlane(store.db, { clock: time.clock });
    // Keys fresh for an hour: only the change feed (or a period boundary) can make these proxies see a change.
    // Each proxy keeps its own holds: what is pinned here travels by the change feed and the clock, not by
    // Redis. (With the suite's shared Redis, these proxies answered 503 at the hold step in whole-suite runs
    // only, never alone or with their folder; the cause is not found yet: docs/keys.md, "Known gaps".)
    const env = { PROXY_KEY_FRESH_MS: '3600000' };
    for (let i = 0; i < 2; i++) proxies.push(await startTestProxy(cp, fake, env, { now: time.nowMs }));
  });
  after(async () => {
    for (const p of proxies) await p.close();
    proxies = [];
    await fake?.close();
    await cp?.close();
  });

  const messages = (p: RunningProxy, k: SeededKey, secret = k.secret) => edgeCall(p.url, 'messages', k.slug, secret, modelBody('messages'));
  /** The status; a 503 also says why in the test's output (it names which check could not be made). */
  const status = async (p: RunningProxy, k: SeededKey, secret?: string) => {
    const res = await messages(p, k, secret);
    if (res.status === 503) console.error('keys over time: 503 from the proxy:', JSON.stringify(res.body));
    return res.status;
  };
  const patch = (k: SeededKey, body: unknown, token = k.consoleToken) => call(`${cp.url}/v1/keys/${k.keyId}`, { method: 'PATCH', token, body });
  const rotate = (k: SeededKey, body: unknown, token = k.consoleToken) => call(`${cp.url}/v1/keys/${k.keyId}/rotate`, { token, body });
  const listed = async (k: SeededKey) => {
    const res = await call(`${cp.url}/v1/workspaces/${k.workspaceId}/keys`, { token: k.consoleToken });
    return (res.body as { id: string }[]).find((x) => x.id === k.keyId) as Record<string, unknown>;
  };

  it('a monthly budget spent in January refuses on both proxies, and serves on both once February begins, without a restart', async function () {
    this.timeout(30_000);
    time.set('2026-01-31T23:59:50Z');
    const k = await seedKey(cp.deps, { budgetUsd: 0.5, budgetPeriod: 'month' });
    // January's spend has used the whole budget (as settled calls would have).
    await cp.deps.db.query(`UPDATE api_keys SET period_spend_usd = 0.5, spend_usd = 0.5, period_started_at = '2026-01-01T00:00:00Z' WHERE id = $1`, [
      k.keyId,
    ]);
    for (const p of proxies) expect(await status(p, k)).to.equal(402);
    expect(JSON.stringify((await messages(proxies[1]!, k)).body)).to.include('used up for this month (it resets at 2026-02-01T00:00:00.000Z)');
    expect(await listed(k)).to.include({ budget_period: 'month', period_spend_usd: 0.5, period_resets_at: '2026-02-01T00:00:00.000Z' });

    time.set('2026-02-01T00:00:01Z');
    for (const p of proxies) expect(await status(p, k), 'February, same cached key').to.equal(200);
    const after = await listed(k);
    expect(after).to.include({ period_resets_at: '2026-03-01T00:00:00.000Z' });
    // Both February calls settle into February: the new period's spend is theirs alone; the lifetime spend keeps January's.
    // Both proxies' settlements are in before the figures are read (else the row may hold one call, the usage API two).
    for (const p of proxies) await p.drain();
    const row = await eventually(async () => {
      const [r] = await cp.deps.db.query<{ period_spend: number; period_started_at: Date; spend: number }>(
        `SELECT period_spend_usd::float8 AS period_spend, period_started_at, spend_usd::float8 AS spend FROM api_keys WHERE id = $1`,
        [k.keyId],
      );
      return r!.spend > 0.5 ? r : undefined;
    });
    expect(new Date(row.period_started_at).toISOString()).to.equal('2026-02-01T00:00:00.000Z');
    expect(row.period_spend).to.be.greaterThan(0).and.below(0.5);
    expect(row.spend).to.be.closeTo(0.5 + row.period_spend, 1e-12);
    // The usage API grouped by key shows the same period figures beside the spend.
    const usage = await call(`${cp.url}/v1/workspaces/${k.workspaceId}/usage?group_by=key`, { token: k.consoleToken });
    expect(usage.status).to.equal(200);
    const group = (usage.body.groups as Record<string, unknown>[]).find((g) => g.id === k.keyId)!;
    expect(group).to.include({ budget_usd: 0.5, budget_period: 'month', period_resets_at: '2026-03-01T00:00:00.000Z' });
    expect(group.period_spend_usd).to.be.closeTo(row.period_spend, 1e-9);
  });

  it('PATCH reaches the second proxy within 2 s: a budget raised from spent lets the key call again, and is audited', async function () {
    this.timeout(20_000);
    const k = await seedKey(cp.deps, { budgetUsd: 0 });
    for (const p of proxies) expect(await status(p, k)).to.equal(402);
    const refused = await messages(proxies[1]!, k);
    expect(JSON.stringify(refused.body)).to.include('PATCH /v1/keys/');
    const res = await patch(k, { budget_usd: 5, name: 'raised', rpm: 1000 });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id: k.keyId, name: 'raised', budget_usd: 5, rpm: 1000, budget_period: null });
    expect(await until(2000, () => status(proxies[1]!, k), 200), 'second proxy within 2 s').to.be.at.least(0);
    const audit = await cp.deps.db.query<{ detail: { changes: Record<string, unknown> } }>(
      `SELECT detail FROM audit_log WHERE action = 'key.update' AND target_id = $1`,
      [k.keyId],
    );
    expect(audit).to.have.length(1);
    expect(audit[0]!.detail.changes).to.have.keys('budget_usd', 'name', 'rpm');
  });

  it('rotate: the new secret works on both proxies at once; the old one until its grace ends, then on neither', async function () {
    this.timeout(20_000);
    const k = await seedKey(cp.deps, { budgetUsd: 5 });
    for (const p of proxies) expect(await status(p, k)).to.equal(200);
    const res = await rotate(k, { grace_seconds: 60 });
    expect(res.status).to.equal(201);
    expect(res.body).to.have.keys('id', 'key', 'prefix', 'previous_expires_at');
    expect(res.body.id).to.equal(k.keyId);
    const graceEnds = Date.parse(res.body.previous_expires_at as string);
    expect(graceEnds - time.nowMs()).to.be.within(55_000, 60_000);
    for (const p of proxies) {
      expect(await until(2000, () => status(p, k, res.body.key as string), 200), 'new secret within 2 s').to.be.at.least(0);
      expect(await status(p, k), 'old secret in its grace').to.equal(200);
    }
    expect(await listed(k)).to.include({ prefix: res.body.prefix, previous_expires_at: res.body.previous_expires_at });
    // Past the grace: the proxies' cached answer for the old secret carries its end; nothing has to be told.
    time.set(new Date(graceEnds + 1000).toISOString());
    for (const p of proxies) {
      expect(await status(p, k), 'old secret after its grace').to.equal(401);
      expect(await status(p, k, res.body.key as string), 'new secret').to.equal(200);
    }
  });

  it('rotate with no grace ends the old secret on the second proxy within 2 s; spend stays with the key', async function () {
    this.timeout(20_000);
    const k = await seedKey(cp.deps, { budgetUsd: 5 });
    expect(await status(proxies[1]!, k)).to.equal(200);
    const res = await rotate(k, { grace_seconds: 0 });
    expect(res.status).to.equal(201);
    expect(await until(2000, () => status(proxies[1]!, k), 401), 'old secret refused within 2 s').to.be.at.least(0);
    expect(await status(proxies[1]!, k, res.body.key as string)).to.equal(200);
    const spent = await eventually(async () => {
      const v = await listed(k);
      return (v.spend_usd as number) > 0 ? v : undefined;
    });
    expect(spent.budget_usd).to.equal(5);
  });

  it('bad input answers problem+json: a bad period, a grace out of range, an unknown field', async () => {
    const k = await seedKey(cp.deps, { budgetUsd: 5 });
    for (const [res, field] of [
      [await patch(k, { budget_period: 'year' }), 'budget_period'],
      [await rotate(k, { grace_seconds: 604_801 }), 'grace_seconds'],
      [await rotate(k, { grace_seconds: -1 }), 'grace_seconds'],
      [await patch(k, { key_hash: 'x' }), 'key_hash'],
      [await patch(k, { expires_at: '2000-01-01T00:00:00Z' }), 'expires_at'],
    ] as const) {
      expect(res.status, field).to.equal(400);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(String(res.body.detail)).to.include(field);
    }
    // A period with no budget at all is refused rather than silently meaning nothing.
    const unbudgeted = await seedKey(cp.deps);
    expect((await patch(unbudgeted, { budget_period: 'day' })).status).to.equal(400);
  });

  it("another org's key is 404 to PATCH and rotate, and nothing changes", async () => {
    const mine = await seedKey(cp.deps, { budgetUsd: 5 });
    const theirs = await seedKey(cp.deps, { budgetUsd: 5 });
    const a = await patch(theirs, { budget_usd: 1000 }, mine.consoleToken);
    const b = await rotate(theirs, {}, mine.consoleToken);
    for (const res of [a, b]) {
      expect(res.status).to.equal(404);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
    }
    expect(await listed(theirs)).to.include({ budget_usd: 5, prefix: theirs.key.prefix });
  });
});

async function eventually<T>(read: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`not so within ${ms} ms`);
    await sleep(50);
  }
}
