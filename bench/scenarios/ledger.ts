import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import type { BenchContext } from '../lib/context.js';
import { compiledArgs, cpuMicros, freePort, readyWhenHealthy, startProcess, statCpuTicks, CPU_RESOLUTION_US } from '../lib/procs.js';
import { bootstrap, consoleClient, createTeamKey, removeDataDir } from '../lib/tollgate.js';
import { BENCH_MODEL } from '../lib/model.js';
import { databaseUrl, POSTGRES_URL } from '../lib/postgres.js';
import { newRequestId } from '../../proxy/request-id.js';
import type { LoadFigures } from './overhead.js';

/** Reports per `POST /internal/usage`: from a proxy at one connection (~50) up to the most one report may carry. */
const BATCHES = [50, 200, 500, 1000];
/** Keys the reports spread over: a batch settles several keys of one workspace, as a busy proxy's does. */
const KEYS = 4;
/** The size the target is judged at: 50 connections' worth of calls in one report window. */
const JUDGED_BATCH = 500;

export interface LedgerFigures {
  store: 'pglite' | 'postgres';
  batch: number;
  reports: number;
  /** The control plane process's CPU per settled report. */
  controlPlaneUs: number;
  /** PostgreSQL's server processes' CPU per report (on PGlite the store is inside the control plane). */
  databaseUs: number | null;
}

/** CPU of every PostgreSQL server process on this machine (the bench's database is the only one at work). */
function postgresCpuMicros(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.includes('(postgres)')) ticks += statCpuTicks(stat);
    } catch {
      /* gone */
    }
  }
  return ticks * CPU_RESOLUTION_US;
}

/**
 * The control plane's side of settlement, alone: the compiled control plane
 * (as `npm run control-plane` runs it) on the system-under-test core takes
 * usage reports in batches the size a proxy sends, on each store, and the
 * CPU it spends per settled report is read from /proc. Every report is a
 * new request id, so each one writes its ledger row and moves the balance
 * and the key's spend, exactly as in production.
 */
export async function ledgerScenario(ctx: BenchContext): Promise<void> {
  const quick = ctx.profile.name === 'quick';
  const seconds = quick ? 1 : 3;
  const stores: { store: LedgerFigures['store']; databaseUrl: string | undefined; dbName?: string }[] = [{ store: 'pglite', databaseUrl: undefined }];
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  const havePostgres = await admin.connect().then(
    () => true,
    (err: Error) => (ctx.log(`ledger: PostgreSQL unreachable at ${POSTGRES_URL} (${err.message}); PGlite only`), false),
  );
  if (havePostgres) {
    const dbName = `tollgate_bench_ledger_${process.pid}_${Date.now()}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    stores.push({ store: 'postgres', databaseUrl: databaseUrl(dbName), dbName });
  }
  const figures: LedgerFigures[] = [];
  try {
    for (const s of stores) figures.push(...(await measureStore(ctx, s.store, s.databaseUrl, seconds)));
  } finally {
    for (const s of stores) {
      if (s.dbName)
        await admin
          .query(`DROP DATABASE IF EXISTS ${s.dbName} WITH (FORCE)`)
          .catch((err: Error) => ctx.log(`could not drop ${s.dbName}: ${err.message}`));
    }
    if (havePostgres) await admin.end();
  }
  ctx.report.data.ledger = figures;
  const overheadCp = (ctx.report.data.overhead as LoadFigures[] | undefined)?.find(
    (f) => f.system === 'tollgate' && f.format === 'chat' && f.connections === 50,
  )?.controlPlaneCpuUsPerRequest;
  const table = ctx.report.section('Ledger: the control plane settling usage reports alone', [
    'store',
    'reports/batch',
    'reports',
    'control plane µs/report',
    'database µs/report',
  ]);
  for (const f of figures) {
    table.row(
      f.store,
      String(f.batch),
      f.reports.toLocaleString('en-US'),
      f.controlPlaneUs.toFixed(1),
      f.databaseUs === null ? '—' : f.databaseUs.toFixed(1),
    );
  }
  const judged = figures.find((f) => f.store === 'pglite' && f.batch === JUDGED_BATCH);
  ctx.report.check({
    scenario: 'ledger',
    figure: `control plane CPU per settled report, PGlite, batches of ${JUDGED_BATCH} (µs)`,
    value: judged?.controlPlaneUs ?? NaN,
    target: '≤ 15',
    pass: judged ? judged.controlPlaneUs <= 15 : undefined,
  });
  table.note(
    `The compiled control plane on core ${ctx.placement.sut ?? '(unpinned)'}, ${seconds} s per batch size after a warm-up, reports spread over ${KEYS} keys of one workspace, sent one batch at a time from the bench process. ` +
      `A proxy at 50 connections sends 500–1000 reports per batch (100 ms of calls), at one connection a few dozen.` +
      (overheadCp === undefined ? '' : ` The overhead scenario's control plane, end to end, this run: ${overheadCp.toFixed(1)} µs per request.`),
  );
}

async function measureStore(
  ctx: BenchContext,
  store: LedgerFigures['store'],
  databaseUrl: string | undefined,
  seconds: number,
): Promise<LedgerFigures[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ledger-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const token = randomBytes(32).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    DATA_DIR: dataDir,
    CONTROL_PLANE_PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: baseUrl,
    MODELS_FILE: await ctx.models(),
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    DATA_PLANE_TOKEN: token,
    DATABASE_URL: databaseUrl ?? '',
    REDIS_URL: '',
  };
  const [node, args] = compiledArgs('bin/control-plane.ts');
  const cp = await startProcess(`control plane (${store})`, node, args, {
    cpus: ctx.placement.sut,
    env,
    ready: readyWhenHealthy(`${baseUrl}/healthz`),
  });
  ctx.track(cp);
  try {
    const org = await bootstrap({ env }, `bench-ledger-${store}`);
    const call = consoleClient(baseUrl, org.console_token);
    await call('POST', `/v1/workspaces/${org.workspace_id}/credits`, { amount_usd: 1_000_000 });
    const team = await call<{ id: string }>('POST', `/v1/workspaces/${org.workspace_id}/teams`, { name: 'bench' });
    for (let i = 0; i < KEYS; i++) await createTeamKey(call, team.id, `bench ${i}`);
    const keyIds = (await call<{ id: string }[]>('GET', `/v1/teams/${team.id}/keys`)).map((k) => k.id);

    let n = 0;
    const post = async (size: number) => {
      const reports = Array.from({ length: size }, () => ({
        request_id: newRequestId(Date.now()),
        key_id: keyIds[n++ % keyIds.length]!,
        model: BENCH_MODEL.alias,
        input_tokens: 1000,
        output_tokens: 200,
        cost_micros: 1_234,
        format: 'chat',
        status: 200,
        latency_ms: 12,
      }));
      const res = await request(`${baseUrl}/internal/usage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reports }),
      });
      const answer = (await res.body.json()) as { results?: { recorded: boolean }[] };
      if (res.statusCode !== 200 || answer.results?.length !== size || !answer.results.every((r) => r.recorded)) {
        throw new Error(`usage report answered ${res.statusCode}: ${JSON.stringify(answer).slice(0, 300)}`);
      }
    };

    const figures: LedgerFigures[] = [];
    for (const batch of BATCHES) {
      ctx.log(`ledger: ${store}, batches of ${batch}`);
      const warmUntil = Date.now() + ctx.profile.warmS * 1000;
      while (Date.now() < warmUntil) await post(batch);
      const cp0 = cpuMicros(cp.pid);
      const db0 = store === 'postgres' ? postgresCpuMicros() : 0;
      let reports = 0;
      const until = Date.now() + seconds * 1000;
      while (Date.now() < until) {
        await post(batch);
        reports += batch;
      }
      figures.push({
        store,
        batch,
        reports,
        controlPlaneUs: (cpuMicros(cp.pid) - cp0) / reports,
        databaseUs: store === 'postgres' ? (postgresCpuMicros() - db0) / reports : null,
      });
    }
    return figures;
  } finally {
    await cp.stop();
    removeDataDir(dataDir);
  }
}
