import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ledger_settle_usage_batch, type UsageRow } from '../../../control-plane/stores/workspaces.js';
import { describeEachStore } from '../../support/stores.js';
import { insertUsageWorkspace } from '../../support/usage-workspace.js';

const KEYS = 16;
const POSTERS = 8;
const BATCHES_PER_POSTER = 6;
const BATCH = 300;

/**
 * Several proxies settling batches for ONE workspace at once, each batch
 * naming the same keys in a different order. On PostgreSQL every poster is
 * its own pooled connection, so a settlement that locked the workspace and
 * key rows in a batch-dependent order deadlocked (40P01) now and then. PGlite
 * is one connection and runs statements one at a time: it cannot deadlock,
 * and the test there pins only the totals. The statement is called without
 * the service's retry on 40P01, which would hide a deadlock rather than fix it.
 */
describeEachStore('usage settlement: concurrent batches for one workspace', (store) => {
  let workspaceId: string;
  let keys: string[];

  beforeEach(async () => {
    const seeded = await insertUsageWorkspace(store.db, 1000);
    workspaceId = seeded.workspaceId;
    keys = [];
    for (let i = 0; i < KEYS; i++) keys.push(await seeded.key(i % 2 ? 500 : null));
    // The budgeted keys count by month: concurrent batches must not lose each other's period spend.
    await store.db.query(`UPDATE api_keys SET budget_period = 'month' WHERE workspace_id = $1 AND budget_usd IS NOT NULL`, [workspaceId]);
  });

  it('settles every batch (no deadlock) and moves balance and each key spend by exactly what was posted', async function () {
    this.timeout(120_000);
    const expectedSpend = new Map<string, number>(keys.map((k) => [k, 0]));
    // Poster p walks the keys from a different start and direction, and each batch visits only a
    // window of them, so two batches name overlapping keys in opposite orders.
    const batchFor = (poster: number, batch: number): UsageRow[] =>
      Array.from({ length: BATCH }, (_, i) => {
        const step = poster % 2 ? i : -i;
        const key = keys[(((poster * 5 + batch * 3 + step) % KEYS) + KEYS) % KEYS]!;
        const costMicros = 1 + ((poster + batch + i) % 7);
        expectedSpend.set(key, expectedSpend.get(key)! + costMicros);
        return {
          request_id: `req_${randomUUID().replace(/-/g, '')}`,
          key_id: key,
          model: 'tg/m',
          input_tokens: 1,
          output_tokens: 1,
          cost_usd: (costMicros / 1_000_000).toFixed(6),
          format: null,
          status: 200,
          latency_ms: 1,
          deployment: null,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
          cache_write_1h_tokens: 0,
          web_search_requests: 0,
          cache_saved_usd: '0',
        };
      });
    const posters = Array.from({ length: POSTERS }, async (_, p) => {
      for (let b = 0; b < BATCHES_PER_POSTER; b++) {
        const rows = batchFor(p, b);
        const { recorded } = await ledger_settle_usage_batch(store.db, rows, new Date());
        expect(rows.every((r) => recorded(r.request_id))).to.equal(true);
      }
    });
    const outcomes = await Promise.allSettled(posters);
    const failures = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => String(o.reason));
    expect(failures).to.deep.equal([]);

    const totalMicros = [...expectedSpend.values()].reduce((a, b) => a + b, 0);
    const [ledger] = await store.db.query<{ n: number; total: string }>(
      `SELECT count(*)::int AS n, (-sum(amount_usd) * 1000000)::text AS total FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'`,
      [workspaceId],
    );
    expect(ledger!.n).to.equal(POSTERS * BATCHES_PER_POSTER * BATCH);
    expect(Number(ledger!.total)).to.equal(totalMicros);
    const [w] = await store.db.query<{ spent: string }>(`SELECT ((1000 - balance_usd) * 1000000)::text AS spent FROM workspaces WHERE id = $1`, [
      workspaceId,
    ]);
    expect(Number(w!.spent)).to.equal(totalMicros);
    const spends = await store.db.query<{ id: string; spend: string; period: string | null }>(
      `SELECT id, (spend_usd * 1000000)::text AS spend, CASE WHEN budget_period IS NULL THEN NULL ELSE (period_spend_usd * 1000000)::text END AS period
         FROM api_keys WHERE workspace_id = $1`,
      [workspaceId],
    );
    expect(Object.fromEntries(spends.map((s) => [s.id, Number(s.spend)]))).to.deep.equal(Object.fromEntries(expectedSpend));
    // Every call was held this month, so each period key's month spend is all of its spend.
    for (const s of spends.filter((x) => x.period !== null)) expect(Number(s.period), s.id).to.equal(Number(s.spend));
  });
});
