import pg from 'pg';
import type { BatchRequest } from '../load/batch-client.js';
import { runBatch } from '../lib/batch.js';
import type { BenchContext } from '../lib/context.js';
import { fmtMs, fmtNum } from '../lib/report.js';
import { bootstrap, consoleClient, startTollgate } from '../lib/tollgate.js';
import { databaseUrl, POSTGRES_URL } from '../lib/postgres.js';

const LEDGER_ROWS = 100_000;
const KEYS = 20;
const DAYS = 30;

/**
 * The usage console on PostgreSQL: a workspace with 100k usage rows spread
 * over 30 days, 20 keys and 3 models, asked for its daily aggregate (by
 * model, and by team, which joins the keys) and for the request log's first
 * page. Measured, not asserted: the figure to watch is the daily aggregate's
 * p50/p99 (target: under 200 ms).
 */
export async function usageScenario(ctx: BenchContext): Promise<void> {
  const dbName = `tollgate_bench_usage_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const modelsFile = await ctx.models();
  let client: pg.Client | undefined;
  const tollgate = await startTollgate({ shape: 'combined', placement: ctx.placement, modelsFile, databaseUrl: databaseUrl(dbName) });
  try {
    ctx.track(tollgate.proxy);
    ctx.removeLater(tollgate.dataDir);
    const org = await bootstrap(tollgate, 'bench-usage');
    const call = consoleClient(tollgate.baseUrl, org.console_token);
    const team = await call<{ id: string }>('POST', `/v1/workspaces/${org.workspace_id}/teams`, { name: 'Bench' });
    for (let i = 0; i < KEYS; i++) await call('POST', `/v1/teams/${team.id}/keys`, { kind: 'team', name: `key ${i}` });

    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    const t0 = Date.now();
    // Rows as settlement leaves them: negative amounts, tokens, format, status (1 in 50 an error), latency.
    await client.query(
      `WITH keys AS (SELECT array_agg(id) AS ids FROM api_keys WHERE workspace_id = $1)
       INSERT INTO ledger_entries (workspace_id, kind, amount_usd, key_id, request_id, model, input_tokens, output_tokens, created_at, format, status, latency_ms)
       SELECT $1, 'usage', -((g % 97) + 1) * 0.0000123, keys.ids[1 + g % array_length(keys.ids, 1)], 'bench-' || g,
              (ARRAY['tg/sonnet', 'tg/haiku', 'tg/gpt-4o-mini'])[1 + g % 3], 100 + g % 900, 10 + g % 300,
              now() - (g::float8 / $2 * interval '${DAYS} days'), (ARRAY['chat', 'messages'])[1 + g % 2],
              CASE WHEN g % 50 = 0 THEN 529 ELSE 200 END, 200 + g % 1500
         FROM generate_series(1, $2::int) AS g, keys`,
      [org.workspace_id, LEDGER_ROWS],
    );
    await client.query('VACUUM ANALYZE ledger_entries');
    const seedS = (Date.now() - t0) / 1000;

    const from = new Date(Date.now() - DAYS * 86_400_000).toISOString();
    const base = `/v1/workspaces/${org.workspace_id}/usage`;
    const headers = { authorization: `Bearer ${org.console_token}` };
    const asks: [string, string][] = [
      ['daily by model', `${base}?granularity=day&group_by=model&from=${from}`],
      ['daily by team (joins keys)', `${base}?granularity=day&group_by=team&from=${from}`],
      ['request log, first page', `${base}/requests?limit=50&from=${from}`],
    ];
    const n = Math.max(50, Math.round(ctx.profile.scimFilterQueries / 5));
    const results = [];
    for (const [label, path] of asks) {
      const requests: BatchRequest[] = Array.from({ length: n }, () => ({ method: 'GET', path, headers }));
      await runBatch(ctx.dir, tollgate.baseUrl, requests.slice(0, 10), 1, ctx.placement.driver); // warm-up
      ctx.log(`usage: ${n} × ${label} over ${fmtNum(LEDGER_ROWS)} ledger rows`);
      results.push({ label, result: await runBatch(ctx.dir, tollgate.baseUrl, requests, 1, ctx.placement.driver) });
    }
    ctx.report.data.usage = { ledgerRows: LEDGER_ROWS, seedS, results: results.map((r) => ({ label: r.label, ...r.result })) };
    const table = ctx.report.section('Usage console on PostgreSQL', ['query', 'ledger rows', 'req/s', 'p50 ms', 'p99 ms', 'errors']);
    for (const r of results) {
      const q = r.result;
      table.row(
        r.label,
        fmtNum(LEDGER_ROWS),
        fmtNum(q.rps),
        fmtMs(q.latencyUs.p50),
        fmtMs(q.latencyUs.p99),
        q.errors ? JSON.stringify(q.statuses) : '0',
      );
    }
    table.note(
      `${fmtNum(LEDGER_ROWS)} usage rows over ${DAYS} days, ${KEYS} keys, 3 models, seeded with SQL in ${seedS.toFixed(1)} s; one connection; the whole HTTP round trip (session check included). Target for the daily aggregate: under 200 ms.`,
    );
  } finally {
    await client?.end();
    await tollgate.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((err: Error) => ctx.log(`could not drop ${dbName}: ${err.message}`));
    await admin.end();
  }
}
