import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPglite } from '../../../control-plane/db/pglite.js';
import { migrate } from '../../../control-plane/db/migrate.js';
import { systemClock } from '../../../shared/clock.js';
import { createLogger } from '../../../shared/logger.js';
import { lockPath } from '../../../control-plane/db/data-dir-lock.js';
import { testConfig, TEST_MODELS_FILE, TEST_SECRETS_KEY } from '../../support/control-plane.js';
import { seedKey, type SeededKey } from '../../support/data-plane.js';
import { freePort } from '../../support/processes.js';
import { USAGE_BATCH_MAX } from '../../../shared/contract/usage.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A key in a fresh embedded store, seeded before the service opens it (PGlite is one process's at a time). */
async function seededDataDir(dataDir: string): Promise<SeededKey> {
  const db = await openPglite(dataDir);
  try {
    await migrate(db);
    return await seedKey({ db, config: testConfig(), clock: systemClock, logger: createLogger('silent', 'test') }, { balanceUsd: 1_000_000 });
  } finally {
    await db.close();
  }
}

/** One settlement batch as big as the contract allows: a single statement of a thousand ledger rows in the store. */
function bigBatch(keyId: string): string {
  const reports = Array.from({ length: USAGE_BATCH_MAX }, () => ({
    request_id: randomUUID(),
    key_id: keyId,
    model: 'tg/sonnet',
    input_tokens: 1200,
    output_tokens: 300,
    cost_micros: 9000,
    format: 'chat',
    status: 200,
    latency_ms: 800,
  }));
  return JSON.stringify({ reports });
}

/** The slowest answer to `GET /healthz` on the proxy, probed back to back until `until` settles. */
async function slowestProbe(url: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true));
  let worst = 0;
  while (!done) {
    const started = performance.now();
    await fetch(url).then((r) => r.arrayBuffer());
    worst = Math.max(worst, performance.now() - started);
  }
  return worst;
}

describe('npm start: the embedded store works outside the proxy’s event loop', function () {
  this.timeout(180_000);
  let dir: string;
  let child: ChildProcess | undefined;
  let output = '';
  let env: NodeJS.ProcessEnv;
  let key: SeededKey;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-start-shape-'));
    key = await seededDataDir(join(dir, 'data'));
    env = {
      PATH: process.env.PATH,
      DATA_DIR: join(dir, 'data'),
      HOST: '127.0.0.1',
      CONTROL_PLANE_PORT: String(await freePort()),
      PROXY_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      MODELS_FILE: TEST_MODELS_FILE,
      SECRETS_KEY: TEST_SECRETS_KEY,
      DATA_PLANE_TOKEN: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'warn',
    };
    child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    while (!output.includes('Tollgate is running') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
    expect(output, output).to.include('Tollgate is running');
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('the store is held by another process than the one serving the proxy', () => {
    const holder = (JSON.parse(readFileSync(lockPath(env.DATA_DIR!), 'utf8')) as { pid: number }).pid;
    expect(holder).to.be.a('number');
    expect(holder, 'the DATA_DIR lock names the process that opened the store').not.to.equal(child!.pid);
  });

  it('one /metrics serves both processes: the proxy’s and the control plane’s, each process’s own figures under its prefix', async () => {
    const text = await (await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`)).text();
    expect(text).to.match(/^# TYPE tollgate_proxy_requests_total counter/m);
    expect(text).to.match(/^# TYPE tollgate_cp_http_requests_total counter/m);
    expect(text).to.match(/^tollgate_process_resident_memory_bytes /m);
    expect(text).to.match(/^tollgate_cp_process_resident_memory_bytes /m);
  });

  it('while the store settles large batches, the proxy answers within a fraction of one batch’s time', async () => {
    const controlPlane = `http://127.0.0.1:${env.CONTROL_PLANE_PORT}`;
    const settle = async () => {
      const started = performance.now();
      const res = await fetch(`${controlPlane}/internal/usage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.DATA_PLANE_TOKEN}`, 'content-type': 'application/json' },
        body: bigBatch(key.keyId),
      });
      const answer = (await res.json()) as { results: { recorded: boolean }[] };
      expect(res.status).to.equal(200);
      expect(answer.results.every((r) => r.recorded)).to.equal(true);
      return performance.now() - started;
    };
    await settle(); // the settlement statement parsed and planned once, the store's code warm
    // Per batch: the slowest probe while it settled, against the batch's own time. The median over
    // eight batches, so a moment's CPU contention on a shared machine does not decide it alone.
    const rounds: { batch: number; worst: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const settling = settle();
      const worst = await slowestProbe(`http://127.0.0.1:${env.PROXY_PORT}/healthz`, settling);
      rounds.push({ batch: await settling, worst });
    }
    const ratios = rounds.map((r) => r.worst / r.batch).sort((a, b) => a - b);
    const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
    const figures = rounds.map((r) => `${r.worst.toFixed(0)}/${r.batch.toFixed(0)} ms`).join(', ');
    // A batch too quick to measure against would make the comparison below pass for nothing.
    expect(median(rounds.map((r) => r.batch).sort((a, b) => a - b)), `slowest probe/batch: ${figures}`).to.be.above(40);
    // On the proxy's loop the store holds a probe for about a whole batch's statement (a ratio near 1).
    expect(median(ratios), `slowest probe/batch: ${figures}`).to.be.below(0.4);
  });

  it('a control plane that dies takes the whole service down, loudly, rather than leave a proxy without it', async () => {
    const holder = (JSON.parse(readFileSync(lockPath(env.DATA_DIR!), 'utf8')) as { pid: number }).pid;
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    process.kill(holder, 'SIGKILL');
    expect(await exited).to.equal(1);
    expect(output).to.include('the control plane process ended unexpectedly');
  });
});
