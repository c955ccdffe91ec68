import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request, type Dispatcher } from 'undici';
import { newRequestId } from '../../proxy/request-id.js';
import type { BenchContext } from './context.js';
import { BENCH_MODEL } from './model.js';
import { databaseUrl, POSTGRES_URL } from './postgres.js';
import { compiledArgs, CPU_RESOLUTION_US, freePort, readyWhenHealthy, startProcess, statCpuTicks, type Proc } from './procs.js';
import { bootstrap, consoleClient, createTeamKey, removeDataDir } from './tollgate.js';

/** CPU of every PostgreSQL server process on this machine (the bench's database is the only one at work). */
export function postgresCpuMicros(): number {
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

/** A database of the bench's own on the PostgreSQL server, dropped after; undefined when the server is unreachable. */
export async function benchDatabase(ctx: BenchContext, prefix: string): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (err) {
    ctx.log(`${prefix}: PostgreSQL unreachable at ${POSTGRES_URL} (${(err as Error).message})`);
    return undefined;
  }
  const name = `tollgate_bench_${prefix.replace(/\W/g, '_')}_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: databaseUrl(name),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err: Error) => ctx.log(`could not drop ${name}: ${err.message}`));
      await admin.end();
    },
  };
}

/** A usage report the control plane failed (5xx): a proxy keeps the batch and sends it again. */
export class ReportRefused extends Error {
  constructor(
    readonly status: number,
    readonly why: string,
  ) {
    super(`usage report answered ${status}: ${why}`);
  }
}

/** The last error message in a control plane's JSON log (e.g. PostgreSQL's `deadlock detected`). */
export function causeIn(log: string): string {
  const messages = [...log.matchAll(/"err":\{"type":"(\w+)","message":"([^"]*)"/g)];
  const last = messages[messages.length - 1];
  return last ? `${last[1]}: ${last[2]}` : 'no error logged';
}

/** A compiled control plane alone on one store, with a workspace, credit and keys, taking usage reports as proxies send them. */
export interface LedgerControlPlane {
  cp: Proc;
  baseUrl: string;
  /** Posts one usage report batch of `size` new calls (spread over the keys); throws unless every one is recorded. */
  post: (size: number, dispatcher?: Dispatcher) => Promise<void>;
  stop: () => Promise<void>;
}

export async function startLedgerControlPlane(
  ctx: BenchContext,
  label: string,
  store: { databaseUrl: string | undefined },
  keys: number,
): Promise<LedgerControlPlane> {
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
    DATABASE_URL: store.databaseUrl ?? '',
    REDIS_URL: '',
  };
  const [node, args] = compiledArgs('bin/control-plane.ts');
  const cp = await startProcess(`control plane (${label})`, node, args, {
    cpus: ctx.placement.sut,
    env,
    ready: readyWhenHealthy(`${baseUrl}/healthz`),
  });
  ctx.track(cp);
  const stop = async () => {
    await cp.stop();
    removeDataDir(dataDir);
  };
  try {
    const org = await bootstrap({ env }, `bench-${label.replace(/\W/g, '-')}`);
    const call = consoleClient(baseUrl, org.console_token);
    await call('POST', `/v1/workspaces/${org.workspace_id}/credits`, { amount_usd: 1_000_000 });
    const team = await call<{ id: string }>('POST', `/v1/workspaces/${org.workspace_id}/teams`, { name: 'bench' });
    for (let i = 0; i < keys; i++) await createTeamKey(call, team.id, `bench ${i}`);
    const keyIds = (await call<{ id: string }[]>('GET', `/v1/teams/${team.id}/keys`)).map((k) => k.id);
    let n = 0;
    const post = async (size: number, dispatcher?: Dispatcher) => {
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
        ...(dispatcher ? { dispatcher } : {}),
      });
      const answer = (await res.body.json()) as { results?: { recorded: boolean }[] };
      if (res.statusCode !== 200 || answer.results?.length !== size || !answer.results.every((r) => r.recorded)) {
        if (res.statusCode < 500) throw new Error(`usage report answered ${res.statusCode}: ${JSON.stringify(answer).slice(0, 300)}`);
        // The answer hides a 500's cause; the control plane's log (written asynchronously) says it.
        await new Promise((resolve) => setTimeout(resolve, 500));
        throw new ReportRefused(res.statusCode, causeIn(cp.output()));
      }
    };
    return { cp, baseUrl, post, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
