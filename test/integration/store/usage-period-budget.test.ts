import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { ControlPlaneDeps } from '../../../control-plane/deps.js';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import type { UsageReport } from '../../../shared/contract/usage.js';
import { describeEachStore } from '../../support/stores.js';
import { api_key_update } from '../../../control-plane/stores/api-keys.js';
import { insertUsageWorkspace } from '../../support/usage-workspace.js';
import { ledger_record_refusals } from '../../../control-plane/stores/refusals.js';

/** The rule of docs/keys.md: a call's cost counts in the budget period its hold was taken in, whenever it settles. */
describeEachStore('usage settlement into budget periods', (store) => {
  let keyId: string;
  const at = (iso: string) => ({ db: store.db, clock: { now: () => new Date(iso) } }) as unknown as ControlPlaneDeps;
  const report = (costMicros: number, heldAt: string): UsageReport => ({
    request_id: `req_${randomUUID().replace(/-/g, '')}`,
    key_id: keyId,
    model: 'tg/m',
    input_tokens: 1,
    output_tokens: 1,
    cost_micros: costMicros,
    held_at_ms: Date.parse(heldAt),
  });
  const row = async () => {
    const [r] = await store.db.query<{ spend: number; period_spend: number; started: Date | null }>(
      `SELECT spend_usd::float8 AS spend, period_spend_usd::float8 AS period_spend, period_started_at AS started FROM api_keys WHERE id = $1`,
      [keyId],
    );
    return { spend: r!.spend, periodSpend: r!.period_spend, started: r!.started && new Date(r!.started).toISOString() };
  };

  beforeEach(async () => {
    const seeded = await insertUsageWorkspace(store.db, 10);
    keyId = await seeded.key(0.01);
    await store.db.query(`UPDATE api_keys SET budget_period = 'day' WHERE id = $1`, [keyId]);
  });

  it("a hold taken before midnight and settled after it counts in its own day, not the new one; the new day's answer has the whole budget", async () => {
    await recordUsage(at('2026-03-01T23:59:00Z'), [report(4_000, '2026-03-01T23:58:00Z')]);
    expect(await row()).to.deep.equal({ spend: 0.004, periodSpend: 0.004, started: '2026-03-01T00:00:00.000Z' });
    // March 2nd: a call of the 2nd settles first, then one whose hold was taken on the 1st.
    const [second] = await recordUsage(at('2026-03-02T00:00:05Z'), [report(1_000, '2026-03-02T00:00:01Z')]);
    expect(second).to.include({
      key_remaining_micros: 9_000,
      budget_micros: 10_000,
      budget_period: 'day',
      period_start_ms: Date.parse('2026-03-02T00:00:00Z'),
    });
    const [late] = await recordUsage(at('2026-03-02T00:00:09Z'), [report(2_000, '2026-03-01T23:59:59Z')]);
    // The late call is in the lifetime spend, and not in the 2nd's.
    expect(await row()).to.deep.equal({ spend: 0.007, periodSpend: 0.001, started: '2026-03-02T00:00:00.000Z' });
    expect(late!.key_remaining_micros).to.equal(9_000);
  });

  it('one batch spanning the boundary: the new day counts only its own calls', async () => {
    await recordUsage(at('2026-03-02T00:00:05Z'), [
      report(3_000, '2026-03-01T23:59:59Z'),
      report(500, '2026-03-02T00:00:02Z'),
      report(250, '2026-03-02T00:00:03Z'),
    ]);
    expect(await row()).to.deep.equal({ spend: 0.00375, periodSpend: 0.00075, started: '2026-03-02T00:00:00.000Z' });
  });

  it('budget alerts count the period: the 50/80/100 % crossings of one day fire again the next day', async () => {
    await recordUsage(at('2026-03-01T12:00:00Z'), [report(10_000, '2026-03-01T12:00:00Z')]);
    await recordUsage(at('2026-03-02T12:00:00Z'), [report(6_000, '2026-03-02T12:00:00Z')]);
    const events = await store.db.query<{ level: number; spend: number }>(
      `SELECT (payload->>'threshold_percent')::int AS level, (payload->>'spend_usd')::float8 AS spend
         FROM alert_events WHERE type = 'key.budget_crossed' AND payload->>'key_id' = $1 ORDER BY created_at, 1`,
      [keyId],
    );
    expect(events).to.deep.equal([
      { level: 50, spend: 0.01 },
      { level: 80, spend: 0.01 },
      { level: 100, spend: 0.01 },
      { level: 50, spend: 0.006 },
    ]);
  });

  it('a change to a period counts what the ledger settled since the period began; keeping the period keeps its count', async () => {
    await store.db.query(`UPDATE api_keys SET budget_period = NULL WHERE id = $1`, [keyId]);
    await recordUsage(at('2026-02-27T12:00:00Z'), [report(1_000, '2026-02-27T12:00:00Z')]);
    await recordUsage(at('2026-03-05T12:00:00Z'), [report(3_000, '2026-03-05T12:00:00Z')]);
    await api_key_update(store.db, keyId, { budget_period: 'month' }, new Date('2026-03-06T00:00:00Z'));
    expect(await row()).to.deep.equal({ spend: 0.004, periodSpend: 0.003, started: '2026-03-01T00:00:00.000Z' });
    await api_key_update(store.db, keyId, { budget_period: 'month', budget_usd: 1 }, new Date('2026-03-07T00:00:00Z'));
    expect((await row()).periodSpend).to.equal(0.003);
  });

  it("ISO weeks start on Monday: Sunday's spend is last week's", async () => {
    await store.db.query(`UPDATE api_keys SET budget_period = 'week' WHERE id = $1`, [keyId]);
    // 2026-03-08 is a Sunday, 2026-03-09 a Monday.
    await recordUsage(at('2026-03-08T12:00:00Z'), [report(1_000, '2026-03-08T12:00:00Z')]);
    expect((await row()).started).to.equal('2026-03-02T00:00:00.000Z');
    const [monday] = await recordUsage(at('2026-03-09T00:00:01Z'), [report(0, '2026-03-09T00:00:00Z')]);
    expect(monday).to.include({ key_remaining_micros: 10_000, period_start_ms: Date.parse('2026-03-09T00:00:00Z') });
  });

  describe("a budget refusal's 100 % alert", () => {
    const refuse = (iso: string) =>
      ledger_record_refusals(
        store.db,
        [
          {
            request_id: `req_${randomUUID().replace(/-/g, '')}`,
            key_id: keyId,
            model: 'tg/m',
            format: 'chat',
            status: 429,
            refusal_reason: 'budget',
            refused_count: 1,
            started_at: new Date(iso),
          },
        ],
        new Date(iso),
      );
    const hundreds = async () =>
      (
        await store.db.query<{ at: Date; spend: number }>(
          `SELECT created_at AS at, (payload->>'spend_usd')::float8 AS spend FROM alert_events
            WHERE type = 'key.budget_crossed' AND payload->>'key_id' = $1 AND (payload->>'threshold_percent')::int = 100 ORDER BY created_at`,
          [keyId],
        )
      ).map((e) => ({ at: new Date(e.at).toISOString(), spend: e.spend }));

    it('fires once per period for a monthly key: refused in November and again in December, one alert in each', async () => {
      await store.db.query(`UPDATE api_keys SET budget_period = 'month' WHERE id = $1`, [keyId]);
      await recordUsage(at('2026-11-10T00:00:00Z'), [report(3_000, '2026-11-10T00:00:00Z')]);
      await refuse('2026-11-20T00:00:00Z');
      await refuse('2026-11-30T23:59:59Z');
      await refuse('2026-12-01T00:00:01Z');
      await refuse('2026-12-15T00:00:00Z');
      // December's alert reports December's spend (none settled yet), not November's.
      expect(await hundreds()).to.deep.equal([
        { at: '2026-11-20T00:00:00.000Z', spend: 0.003 },
        { at: '2026-12-01T00:00:01.000Z', spend: 0 },
      ]);
    });

    it("a refusal after the period's settled crossing adds none; the next period's crossing fires again", async () => {
      await recordUsage(at('2026-03-01T12:00:00Z'), [report(10_000, '2026-03-01T12:00:00Z')]);
      await refuse('2026-03-01T13:00:00Z');
      await recordUsage(at('2026-03-02T12:00:00Z'), [report(10_000, '2026-03-02T12:00:00Z')]);
      await refuse('2026-03-02T13:00:00Z');
      expect((await hundreds()).map((e) => e.at)).to.deep.equal(['2026-03-01T12:00:00.000Z', '2026-03-02T12:00:00.000Z']);
    });

    it('a lifetime budget fires once per budget amount, whatever the month', async () => {
      await store.db.query(`UPDATE api_keys SET budget_period = NULL WHERE id = $1`, [keyId]);
      await refuse('2026-11-20T00:00:00Z');
      await refuse('2026-12-20T00:00:00Z');
      expect(await hundreds()).to.have.length(1);
      await api_key_update(store.db, keyId, { budget_usd: 0.02 }, new Date('2026-12-21T00:00:00Z'));
      await refuse('2026-12-22T00:00:00Z');
      expect((await hundreds()).map((e) => e.at)).to.deep.equal(['2026-11-20T00:00:00.000Z', '2026-12-22T00:00:00.000Z']);
    });
  });
});
