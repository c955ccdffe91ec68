import { connect } from 'node:net';
import { Client } from 'undici';
import type { BenchContext } from '../lib/context.js';
import { tollgateRequest } from '../lib/context.js';
import { benchDatabase, postgresCpuMicros, ReportRefused, startLedgerControlPlane, type LedgerControlPlane } from '../lib/ledger-cp.js';
import { runLoad } from '../lib/load.js';
import { cpuMicros, waitUntilIdle } from '../lib/procs.js';
import { startRedisCounter } from '../lib/redis-counter.js';
import { fmtNum } from '../lib/report.js';
import { provision, startTollgate } from '../lib/tollgate.js';

/** Reports per batch: what a proxy at 50 connections sends per report window. */
const BATCH = 500;
/** Keys the reports spread over, all of one workspace: every batch moves the same balance, as busy proxies' do. */
const KEYS = 16;
/** How many proxies post at once; the target is judged at the most. */
const PROXIES = [1, 3, 4];
const TARGET_PER_CORE = 20_000;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface SettlementCapacity {
  proxies: number;
  reports: number;
  seconds: number;
  /** Calls settled per wall-clock second. */
  perSecond: number;
  controlPlaneUsPerReport: number;
  /** Share of one core the control plane used. */
  controlPlaneCoreUse: number;
  /** 1e6 ÷ control-plane µs per report: what one core of control plane settles per second. */
  perSecondPerCore: number;
  databaseUsPerReport: number;
  /** Batches the control plane failed (5xx) during the measurement, by the cause its log gave. */
  refused?: Record<string, number>;
}

export interface RedisPerCall {
  connections: number;
  calls: number;
  commandsPerCall: number;
  roundTripsPerCall: number;
  /** Commands per call by name, most first. */
  byCommand: [string, number][];
}

/** Figures from the counts one measurement took: settled reports, control-plane and database CPU, wall time. */
export function capacityOf(proxies: number, reports: number, seconds: number, cpUs: number, dbUs: number): SettlementCapacity {
  const controlPlaneUsPerReport = cpUs / reports;
  return {
    proxies,
    reports,
    seconds,
    perSecond: reports / seconds,
    controlPlaneUsPerReport,
    controlPlaneCoreUse: cpUs / (seconds * 1e6),
    perSecondPerCore: 1e6 / controlPlaneUsPerReport,
    databaseUsPerReport: dbUs / reports,
  };
}

/** `proxies` clients, each on its own connection, post batches back to back for `seconds`. */
/**
 * `proxies` clients, each on its own connection, post batches back to back for `seconds`. A batch
 * the control plane fails (5xx) is counted and not settled; the client goes on, as a proxy does
 * (it keeps the batch and sends it again).
 */
async function settleFrom(ledger: LedgerControlPlane, proxies: number, seconds: number): Promise<{ reports: number; refused: Map<string, number> }> {
  const clients = Array.from({ length: proxies }, () => new Client(ledger.baseUrl));
  let reports = 0;
  const refused = new Map<string, number>();
  const until = Date.now() + seconds * 1000;
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (Date.now() < until) {
          try {
            await ledger.post(BATCH, client);
            reports += BATCH;
          } catch (err) {
            if (!(err instanceof ReportRefused)) throw err;
            refused.set(err.why, (refused.get(err.why) ?? 0) + 1);
          }
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  return { reports, refused };
}

async function settlementCapacity(ctx: BenchContext): Promise<{ figures: SettlementCapacity[]; warmRefused: Record<string, number> }> {
  const database = await benchDatabase(ctx, 'scale-out');
  const figures: SettlementCapacity[] = [];
  let warmRefused: Record<string, number> = {};
  if (!database) return { figures, warmRefused };
  try {
    const ledger = await startLedgerControlPlane(ctx, 'scale-out postgres', { databaseUrl: database.url }, KEYS);
    try {
      const seconds = ctx.profile.name === 'quick' ? 2 : 5;
      warmRefused = Object.fromEntries((await settleFrom(ledger, Math.max(...PROXIES), ctx.profile.warmS)).refused);
      for (const proxies of PROXIES) {
        ctx.log(`scale-out: ${proxies} prox${proxies === 1 ? 'y' : 'ies'} posting batches of ${BATCH} to one control plane on PostgreSQL`);
        await waitUntilIdle(ledger.cp.pid, 5_000);
        const cp0 = cpuMicros(ledger.cp.pid);
        const db0 = postgresCpuMicros();
        const t0 = performance.now();
        const { reports, refused } = await settleFrom(ledger, proxies, seconds);
        const wallS = (performance.now() - t0) / 1000;
        figures.push({
          ...capacityOf(proxies, reports, wallS, cpuMicros(ledger.cp.pid) - cp0, postgresCpuMicros() - db0),
          refused: Object.fromEntries(refused),
        });
      }
    } finally {
      await ledger.stop();
    }
  } finally {
    await database.drop();
  }
  return { figures, warmRefused };
}

const sum = (counts: Record<string, number> | undefined): number => Object.values(counts ?? {}).reduce((a, b) => a + b, 0);

function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname, port: Number(u.port || 6379), timeout: 2_000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

/** Redis commands and round trips per call, counted on the wire between the proxy and Redis (others share the server). */
async function redisPerCall(ctx: BenchContext): Promise<RedisPerCall[]> {
  if (!(await reachable(REDIS_URL))) {
    ctx.log(`scale-out: Redis unreachable at ${REDIS_URL}; no Redis figures`);
    return [];
  }
  const counter = await startRedisCounter(REDIS_URL);
  const figures: RedisPerCall[] = [];
  try {
    const tollgate = await startTollgate({ shape: 'split', placement: ctx.placement, modelsFile: await ctx.models(), redisUrl: counter.url });
    ctx.track(...(tollgate.controlPlane ? [tollgate.controlPlane] : []), tollgate.proxy);
    ctx.removeLater(tollgate.dataDir);
    try {
      const provisioned = await provision(tollgate, 'bench-redis');
      const req = tollgateRequest(tollgate.edgeUrl, provisioned.org.workspace_slug, provisioned.key, 'chat');
      const load = (connections: number, durationS: number) =>
        runLoad(ctx.tool, { url: req.url, method: 'POST', headers: req.headers, body: req.body, connections, durationS }, ctx.placement.driver);
      await load(50, ctx.profile.freshWarmS);
      for (const connections of [1, 50]) {
        ctx.log(`scale-out: Redis commands per call at ${connections} connection(s)`);
        if (tollgate.controlPlane) await waitUntilIdle(tollgate.controlPlane.pid);
        counter.reset();
        const r = await load(connections, ctx.profile.measureS);
        // Settlement and hold release trail the answers by up to a report window.
        if (tollgate.controlPlane) await waitUntilIdle(tollgate.controlPlane.pid);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const seen = counter.read();
        const calls = r.requests - r.errors;
        figures.push({
          connections,
          calls,
          commandsPerCall: seen.commands / calls,
          roundTripsPerCall: seen.roundTrips / calls,
          byCommand: Object.entries(seen.byCommand)
            .map(([name, n]): [string, number] => [name, n / calls])
            .sort((a, b) => b[1] - a[1]),
        });
      }
    } finally {
      await tollgate.stop();
    }
  } finally {
    await counter.close();
  }
  return figures;
}

/**
 * What more proxies lean on: how many calls one control plane on PostgreSQL
 * settles per second per core with batches arriving from several proxies at
 * once, and how many Redis commands and round trips each call costs when
 * proxies share limits and holds through Redis.
 */
export async function scaleOutScenario(ctx: BenchContext): Promise<void> {
  const { figures: capacity, warmRefused } = await settlementCapacity(ctx);
  const redis = await redisPerCall(ctx);
  ctx.report.data.scaleOut = { capacity, warmRefused, redis };
  const table = ctx.report.section(`Scale-out: one control plane on PostgreSQL settling batches of ${BATCH} from several proxies at once`, [
    'proxies',
    'reports',
    'settled/s',
    'CP µs/report',
    'CP core',
    'settled/s per CP core',
    'PostgreSQL µs/report',
    'batches failed',
  ]);
  for (const c of capacity) {
    table.row(
      String(c.proxies),
      c.reports.toLocaleString('en-US'),
      fmtNum(c.perSecond),
      fmtNum(c.controlPlaneUsPerReport),
      `${Math.round(c.controlPlaneCoreUse * 100)}%`,
      fmtNum(c.perSecondPerCore),
      fmtNum(c.databaseUsPerReport),
      String(sum(c.refused)),
    );
  }
  const causes = new Map<string, number>();
  for (const r of [warmRefused, ...capacity.map((c) => c.refused ?? {})])
    for (const [cause, n] of Object.entries(r)) causes.set(cause, (causes.get(cause) ?? 0) + n);
  for (const [cause, n] of causes)
    table.note(`${n} batch(es) answered 5xx (warm-up included): ${cause}. A proxy keeps such a batch and sends it again.`);
  table.note(
    `The compiled control plane pinned to core ${ctx.placement.sut ?? '(unpinned)'}; each proxy is its own connection posting back to back; ${KEYS} keys of one workspace. PostgreSQL runs unpinned; its CPU is every postgres process's.`,
  );
  const redisTable = ctx.report.section('Scale-out: Redis per call with REDIS_URL set (Chat Completions, non-streamed)', [
    'conns',
    'calls',
    'commands/call',
    'round trips/call',
    'commands by name (per call)',
  ]);
  for (const r of redis) {
    redisTable.row(
      String(r.connections),
      r.calls.toLocaleString('en-US'),
      fmtNum(r.commandsPerCall),
      fmtNum(r.roundTripsPerCall),
      r.byCommand
        .slice(0, 5)
        .map(([name, n]) => `${name} ${fmtNum(n)}`)
        .join(', '),
    );
  }
  redisTable.note(
    "Counted on the wire by a pass-through between the proxy and Redis: a command is one RESP array; a round trip is the proxy's write after Redis's last answer (pipelined commands share one). Includes the proxy's background work during the run.",
  );
  const judged = capacity.find((c) => c.proxies === Math.max(...PROXIES));
  const failed = judged ? sum(judged.refused) + sum(warmRefused) : NaN;
  ctx.report.check({
    scenario: 'scale-out',
    figure: `usage batches the control plane failed, ${Math.max(...PROXIES)} proxies at once (warm-up included)`,
    value: failed,
    target: '0',
    pass: judged ? failed === 0 : undefined,
    note: judged ? [...causes.keys()].join('; ') || undefined : 'PostgreSQL unreachable',
  });
  ctx.report.check({
    scenario: 'scale-out',
    figure: `settled calls per second per control-plane core, PostgreSQL, ${Math.max(...PROXIES)} proxies`,
    value: judged?.perSecondPerCore ?? NaN,
    target: `≥ ${TARGET_PER_CORE.toLocaleString('en-US')}`,
    pass: judged ? judged.perSecondPerCore >= TARGET_PER_CORE : undefined,
    note: judged ? undefined : 'PostgreSQL unreachable',
  });
}
