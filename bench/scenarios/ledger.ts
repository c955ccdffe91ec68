import type { BenchContext } from '../lib/context.js';
import { benchDatabase, postgresCpuMicros, startLedgerControlPlane } from '../lib/ledger-cp.js';
import { cpuMicros } from '../lib/procs.js';
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
  const stores: { store: LedgerFigures['store']; databaseUrl: string | undefined }[] = [{ store: 'pglite', databaseUrl: undefined }];
  const database = await benchDatabase(ctx, 'ledger');
  if (database) stores.push({ store: 'postgres', databaseUrl: database.url });
  else ctx.log('ledger: PGlite only');
  const figures: LedgerFigures[] = [];
  try {
    for (const s of stores) figures.push(...(await measureStore(ctx, s.store, s.databaseUrl, seconds)));
  } finally {
    await database?.drop();
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
  const { cp, post, stop } = await startLedgerControlPlane(ctx, `ledger ${store}`, { databaseUrl }, KEYS);
  try {
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
    await stop();
  }
}
