import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import { usageReportSchema, type UsageReport } from '../../../shared/contract/usage.js';
import { femtosToMicrosCeil } from '../../../shared/money-units.js';
import { priceUsage } from '../../../shared/pricing.js';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';

/**
 * The control plane bills the exact cost a report carries, records the cache
 * split and what caching saved, answers them in the usage API and CSV, and
 * bills a cost above the hold in full, letting balance and budget go below
 * zero and telling proxies.
 */
describeEachStore('usage: exact money, the cache split, and billing above the hold', (store) => {
  let cp: TestControlPlane;
  let token: string;
  let workspaceId: string;
  let keyId: string;
  let usageUrl: string;

  const cached = priceUsage(
    { inputTokens: 2000, cacheReadTokens: 80000, cacheWrite5mTokens: 3000, cacheWrite1hTokens: 0, outputTokens: 5, webSearchRequests: 0 },
    { input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
    'messages',
  );
  const report = (over: Partial<UsageReport>): UsageReport =>
    usageReportSchema.parse({
      request_id: `req_${randomUUID()}`,
      key_id: keyId,
      model: 'tg/sonnet',
      input_tokens: 2000,
      output_tokens: 5,
      cost_micros: Number(femtosToMicrosCeil(cached.costFemtos)),
      format: 'messages',
      status: 200,
      cache_read_tokens: 80000,
      cache_write_tokens: 3000,
      cache_write_1h_tokens: 0,
      web_search_requests: 0,
      cost_femtos: String(cached.costFemtos),
      cache_saved_femtos: String(cached.savedFemtos),
      ...over,
    });
  const money = async () => {
    const [row] = await store.db.query<{ balance: string; spend: string }>(
      `SELECT w.balance_usd::text AS balance, k.spend_usd::text AS spend FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE k.id = $1`,
      [keyId],
    );
    return row!;
  };

  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(async () => cp?.close());

  beforeEach(async () => {
    const boot = await seedOrg(cp.deps);
    token = boot.console_token;
    workspaceId = boot.workspace_id;
    usageUrl = `${cp.url}/v1/workspaces/${workspaceId}/usage`;
    await ok(`${cp.url}/v1/workspaces/${workspaceId}/credits`, { token, body: { amount_usd: 1 } });
    const team = await ok(`${cp.url}/v1/workspaces/${workspaceId}/teams`, { token, body: { name: 'Platform' } }, 201);
    const key = await ok(`${cp.url}/v1/teams/${team.id}/keys`, { token, body: { kind: 'team', name: 'ci', budget_usd: 0.1 } }, 201);
    keyId = key.id;
  });

  it('bills the issue’s cached Messages call at 41,325 µ$ exactly and shows the split and the saving per request and in aggregate', async () => {
    const [result] = await recordUsage(cp.deps, [report({})]);
    expect(result!.recorded).to.equal(true);
    expect(await money()).to.deep.equal({ balance: '0.958675000000000', spend: '0.041325000000000' });

    const page = await ok(`${usageUrl}/requests`, { token });
    expect(page.requests[0]).to.include({
      input_tokens: 2000,
      output_tokens: 5,
      cache_read_tokens: 80000,
      cache_write_tokens: 3000,
      cache_write_1h_tokens: 0,
      web_search_requests: 0,
      cost_usd: 0.041325,
      cache_saved_usd: 0.21375,
    });
    const summary = await ok(usageUrl, { token });
    expect(summary.totals).to.include({ cache_read_tokens: 80000, cache_write_tokens: 3000, cache_saved_usd: 0.21375, spend_usd: 0.041325 });
    expect(summary.buckets[0]).to.include({ cache_read_tokens: 80000, cache_write_tokens: 3000 });

    const csv = await fetch(`${usageUrl}/requests?format=csv`, { headers: { authorization: `Bearer ${token}` } });
    const [header, line] = (await csv.text()).trimEnd().split('\r\n');
    const cells = Object.fromEntries(header!.split(',').map((h, i) => [h, line!.split(',')[i]]));
    expect(cells).to.include({ cache_read_tokens: '80000', cache_write_tokens: '3000', cost_usd: '0.041325000', cache_saved_usd: '0.213750000' });
  });

  it('keeps a sub-micro-dollar cost exact in the ledger: one token at $0.1875 per million', async () => {
    const tiny = priceUsage(
      { inputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 1, cacheWrite1hTokens: 0, outputTokens: 0, webSearchRequests: 0 },
      { input_usd_per_mtok: 0.15, output_usd_per_mtok: 0.6 },
      'messages',
    );
    for (let i = 0; i < 3; i++)
      await recordUsage(cp.deps, [report({ cost_micros: 1, cost_femtos: String(tiny.costFemtos), cache_saved_femtos: '0' })]);
    expect(await money()).to.deep.equal({ balance: '0.999999437500000', spend: '0.000000562500000' });
  });

  it('falls back to cost_micros for a report without the exact cost, and reads the split as zero', async () => {
    await recordUsage(cp.deps, [
      usageReportSchema.parse({
        request_id: `req_${randomUUID()}`,
        key_id: keyId,
        model: 'tg/sonnet',
        input_tokens: 1,
        output_tokens: 1,
        cost_micros: 7,
      }),
    ]);
    expect((await money()).spend).to.equal('0.000007000000000');
    const page = await ok(`${usageUrl}/requests`, { token });
    expect(page.requests[0]).to.include({ cache_read_tokens: 0, cache_write_tokens: 0, cache_saved_usd: 0 });
  });

  it('bills a cost above the hold in full: budget and balance go below zero, and proxies are told the money ran out', async () => {
    const [{ id: fence }] = await store.db.query<{ id: string }>(`SELECT COALESCE(max(id), 0)::text AS id FROM change_feed`);
    // $1.50 against a $0.10 budget and a $1 balance: whatever was held, the usage is what is billed.
    const [result] = await recordUsage(cp.deps, [report({ cost_micros: 1_500_000, cost_femtos: '1500000000000000' })]);
    expect(result).to.include({ recorded: true, balance_micros: -500_000, key_remaining_micros: -1_400_000 });
    expect(await money()).to.deep.equal({ balance: '-0.500000000000000', spend: '1.500000000000000' });
    const feed = await store.db.query<{ topic: string; subject_id: string }>(`SELECT topic, subject_id FROM change_feed WHERE id > $1 ORDER BY id`, [
      fence,
    ]);
    expect(feed).to.deep.include.members([
      { topic: 'workspace', subject_id: workspaceId },
      { topic: 'key', subject_id: keyId },
    ]);
    const ws = await ok(`${cp.url}/v1/workspaces/${workspaceId}`, { token });
    expect(ws.balance_usd).to.equal(-0.5);
  });

  it('refuses a report whose 1-hour writes exceed its cache writes, or whose exact cost is not digits', () => {
    expect(usageReportSchema.safeParse({ ...report({}), cache_write_1h_tokens: 3001 }).success).to.equal(false);
    expect(usageReportSchema.safeParse({ ...report({}), cost_femtos: '1.5' }).success).to.equal(false);
    expect(usageReportSchema.safeParse({ ...report({}), cost_femtos: 15 }).success).to.equal(false);
  });
});
