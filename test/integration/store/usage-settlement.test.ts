import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { ControlPlaneDeps } from '../../../control-plane/deps.js';
import { recordUsage, recordUsageByKey } from '../../../control-plane/services/data-plane/usage.js';
import type { UsageReport } from '../../../shared/contract/usage.js';
import { CHANGE_CHANNEL } from '../../../control-plane/stores/change-feed.js';
import { describeEachStore } from '../../support/stores.js';
import { insertUsageWorkspace } from '../../support/usage-workspace.js';

describeEachStore('usage settlement: one statement per batch', (store) => {
  let workspaceId: string;
  let budgetKey: string;
  let plainKey: string;
  const deps = () => ({ db: store.db, clock: { now: () => new Date('2026-01-02T03:04:05Z') } }) as unknown as ControlPlaneDeps;
  const report = (keyId: string, costMicros: number, requestId = `req_${randomUUID().replace(/-/g, '')}`): UsageReport => ({
    request_id: requestId,
    key_id: keyId,
    model: 'tg/m',
    input_tokens: 10,
    output_tokens: 2,
    cost_micros: costMicros,
  });
  const money = async () => {
    const [w] = await store.db.query<{ balance: string; version: number }>(
      `SELECT balance_usd::text AS balance, balance_version::int AS version FROM workspaces WHERE id = $1`,
      [workspaceId],
    );
    const keys = await store.db.query<{ id: string; spend: string }>(`SELECT id, spend_usd::text AS spend FROM api_keys WHERE workspace_id = $1`, [
      workspaceId,
    ]);
    return { balance: Number(w!.balance), version: w!.version, spend: Object.fromEntries(keys.map((k) => [k.id, Number(k.spend)])) };
  };
  const changes = () => store.db.query<{ topic: string; subject_id: string }>(`SELECT topic, subject_id FROM change_feed ORDER BY id`);

  beforeEach(async () => {
    const seeded = await insertUsageWorkspace(store.db, 0.01);
    workspaceId = seeded.workspaceId;
    budgetKey = await seeded.key(0.002);
    plainKey = await seeded.key(null);
    await store.db.query(`DELETE FROM change_feed`);
  });

  it("writes one ledger row per request and moves balance and spend by the batch total, answering each key's money", async () => {
    const before = await money();
    const results = await recordUsage(deps(), [report(budgetKey, 300), report(plainKey, 1_000), report(budgetKey, 200)]);
    const after = await money();
    expect(results.map((r) => r.recorded)).to.deep.equal([true, true, true]);
    const rows = await store.db.query<{ n: number; total: string }>(
      `SELECT count(*)::int AS n, sum(amount_usd)::text AS total FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'`,
      [workspaceId],
    );
    expect(rows[0]!.n).to.equal(3);
    expect(Number(rows[0]!.total)).to.equal(-0.0015);
    expect(after.balance).to.equal(0.0085);
    expect(after.version).to.equal(before.version + 1);
    expect(after.spend[budgetKey]).to.equal(0.0005);
    expect(after.spend[plainKey]).to.equal(0.001);
    expect(results[0]).to.include({ workspace_id: workspaceId, balance_micros: 8_500, key_remaining_micros: 1_500 });
    expect(results[1]).to.include({ workspace_id: workspaceId, balance_micros: 8_500, key_remaining_micros: null });
    expect(results[0]!.balance_version).to.equal(after.version);
    expect(await changes()).to.deep.equal([]);
  });

  it('records a request id once: a repeated report, in a later batch or the same one, moves no money', async () => {
    const first = report(plainKey, 1_000);
    await recordUsage(deps(), [first]);
    const before = await money();
    const again = await recordUsage(deps(), [first, report(plainKey, 1_000, first.request_id)]);
    expect(again.map((r) => r.recorded)).to.deep.equal([false, false]);
    expect(again[0]!.balance_micros).to.equal(9_000);
    expect(await money()).to.deep.equal(before);
    const [row] = await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_entries WHERE request_id = $1`, [first.request_id]);
    expect(row!.n).to.equal(1);

    const twice = report(budgetKey, 100);
    const inOne = await recordUsage(deps(), [twice, twice]);
    expect(inOne.map((r) => r.recorded)).to.deep.equal([true, true]);
    expect((await money()).spend[budgetKey]).to.equal(0.0001);
  });

  it('publishes (and NOTIFYs) the workspace once when a batch empties the balance, and the key when it uses up its budget', async () => {
    let heard = 0;
    let wake: () => void = () => undefined;
    const twoHeard = new Promise<void>((resolve) => (wake = resolve));
    const stop = await store.db.listen!(CHANGE_CHANNEL, () => {
      if (++heard === 2) wake();
    });
    await recordUsage(deps(), [report(budgetKey, 2_000), report(plainKey, 5_000), report(plainKey, 4_000)]);
    expect(await changes()).to.have.deep.members([
      { topic: 'workspace', subject_id: workspaceId },
      { topic: 'key', subject_id: budgetKey },
    ]);
    await twoHeard;
    await stop();
    // Already empty and already used up: nothing crosses again.
    await recordUsage(deps(), [report(budgetKey, 1), report(plainKey, 1)]);
    expect(await changes()).to.have.length(2);
  });

  it('answers an unknown key as not recorded, without a workspace, and records the rest of the batch', async () => {
    const results = await recordUsage(deps(), [report(randomUUID(), 100), report(plainKey, 100)]);
    expect(results[0]).to.include({ recorded: false, workspace_id: null });
    expect(results[1]).to.include({ recorded: true, workspace_id: workspaceId });
  });

  it('answers each report of a mixed batch (a repeat, a new call, an unknown key) and moves money for the new one only', async () => {
    const seen = report(plainKey, 1_000);
    await recordUsage(deps(), [seen]);
    const fresh = report(plainKey, 500);
    const results = await recordUsage(deps(), [seen, fresh, report(randomUUID(), 100)]);
    expect(results.map((r) => r.recorded)).to.deep.equal([false, true, false]);
    // $0.01 less the first call's $0.001 and the new call's $0.0005.
    expect(results[1]!.balance_micros).to.equal(8_500);
    expect((await money()).balance).to.equal(0.0085);

    const onlyUnknown = await recordUsage(deps(), [report(randomUUID(), 100), report(randomUUID(), 100)]);
    expect(onlyUnknown.map((r) => r.recorded)).to.deep.equal([false, false]);
  });

  it("answers per key when asked: each known key's money after the batch once, the same as every per-report result of that key", async () => {
    const unknown = randomUUID();
    const keys = await recordUsageByKey(deps(), [report(budgetKey, 300), report(plainKey, 1_000), report(budgetKey, 200), report(unknown, 100)]);
    const after = await money();
    expect(keys.map((k) => k.key_id).sort()).to.deep.equal([budgetKey, plainKey].sort());
    const byKey = new Map(keys.map((k) => [k.key_id, k]));
    expect(byKey.get(budgetKey)).to.deep.equal({
      key_id: budgetKey,
      workspace_id: workspaceId,
      balance_micros: 8_500,
      balance_version: after.version,
      key_remaining_micros: 1_500,
      key_version: byKey.get(budgetKey)!.key_version,
      // A lifetime budget of $0.002: no period.
      budget_micros: 2_000,
      budget_period: null,
      period_start_ms: null,
      budget_day: byKey.get(budgetKey)!.budget_day,
    });
    expect(byKey.get(plainKey)).to.include({ workspace_id: workspaceId, balance_micros: 8_500, key_remaining_micros: null });
    // The per-report answer of a later batch agrees with it key by key.
    const results = await recordUsage(deps(), [report(budgetKey, 0)]);
    expect(results[0]!.key_version).to.be.at.least(byKey.get(budgetKey)!.key_version);
  });

  it('is a named statement, prepared once per connection and reused by the next batch', async () => {
    const prepared = await store.db.transaction(async (tx) => {
      const txDeps = { db: tx, clock: { now: () => new Date() } } as unknown as ControlPlaneDeps;
      await recordUsage(txDeps, [report(plainKey, 10)]);
      const second = await recordUsage(txDeps, [report(plainKey, 10), report(plainKey, 10)]);
      expect(second.map((r) => r.recorded)).to.deep.equal([true, true]);
      return tx.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name = 'ledger_settle_usage_batch'`);
    });
    expect(prepared).to.have.length(1);
  });
});
