import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Database } from '../../control-plane/db/database.js';
import { migrate } from '../../control-plane/db/migrate.js';
import { openPglite } from '../../control-plane/db/pglite.js';
import { openPostgres } from '../../control-plane/db/postgres.js';
import { TEST_MODELS_FILE, TEST_SECRETS_KEY } from './control-plane.js';
import type { FakeUpstream } from './fake-upstream/index.js';
import type { UsageReport } from '../../shared/contract/usage.js';
import { TEST_POSTGRES_URL, type StoreName } from './stores.js';
import { UPSTREAM_SECRET } from './data-plane.js';

/*
 * Real processes for fault tests: the control plane and proxies run as the
 * operator runs them (`bin/*.ts` children), and Redis is a redis-server of the
 * test's own on a free port, so killing it touches nobody else's.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export async function waitFor(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Child {
  process: ChildProcess;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
  /** What it wrote to stderr (and stdout), for failure messages. */
  output(): string;
  /** Its pid and whether it still runs, or how it ended: a failure message must tell a crash from a kill. */
  state(): string;
}

export function run(args: string[], env: NodeJS.ProcessEnv, command = process.execPath): Child {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let ended = '';
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = `${signal ? `ended by ${signal}` : `exited with code ${code}`} at ${new Date().toISOString()}`;
      resolve(code ?? signal ?? -1);
    }),
  );
  return { process: child, exited, output: () => out, state: () => `pid ${child.pid}, ${ended || 'running'}` };
}

export async function kill(child: Child | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | string | undefined> {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return undefined;
  child.process.kill(signal);
  return child.exited;
}

/** Whether `redis-server` can be started here (outside CI a missing binary is a reported skip). */
export function haveRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

/** A redis-server of this test's own, without persistence, as docker-compose runs it: a restart starts empty. */
export async function startOwnRedis(): Promise<{ url: string; kill(): Promise<void>; restart(): Promise<void> }> {
  const port = await freePort();
  let child: Child | undefined;
  const start = async () => {
    child = run(['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env, 'redis-server');
    await waitFor('redis-server', 10_000, async () => {
      const { Redis } = await import('ioredis');
      const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    kill: async () => {
      await kill(child);
    },
    restart: start,
  };
}

/**
 * A store for a control-plane child: a fresh PostgreSQL database, or an
 * embedded store in a temporary DATA_DIR. `open()` gives the test the same
 * database (for PGlite only while no control plane runs on it).
 */
export async function childStore(name: StoreName): Promise<{ env: NodeJS.ProcessEnv; open(): Promise<Database>; drop(): Promise<void> } | undefined> {
  if (name === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-faults-cp-'));
    return {
      env: { DATA_DIR: dataDir },
      async open() {
        const db = await openPglite(dataDir);
        await migrate(db);
        return db;
      },
      async drop() {
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (err) {
    if (process.env.CI) throw err;
    return undefined;
  }
  const dbName = `tollgate_faults_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${dbName}`;
  return {
    env: { DATABASE_URL: url.toString() },
    async open() {
      const db = await openPostgres(url.toString());
      await migrate(db);
      return db;
    },
    async drop() {
      const c = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** The test models file with every provider aimed at the fake, for child processes. */
export function modelsFileFor(fake: Pick<FakeUpstream, 'chatCompletionsBaseUrl' | 'messagesBaseUrl'>): string {
  const models = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, Record<string, string>> };
  for (const p of Object.values(models.providers)) {
    p.chat_completions_base_url = fake.chatCompletionsBaseUrl;
    p.messages_base_url = fake.messagesBaseUrl;
  }
  const file = join(mkdtempSync(join(tmpdir(), 'tollgate-faults-models-')), 'models.json');
  writeFileSync(file, JSON.stringify(models));
  return file;
}

export interface ProcessPlane {
  token: string;
  controlPlaneUrl: string;
  /** Starts (or restarts) the control plane on its fixed port and waits until it answers. */
  startControlPlane(): Promise<void>;
  stopControlPlane(signal?: NodeJS.Signals): Promise<void>;
  /** Starts a proxy with these settings on a fixed port (kept across restarts); resolves once /healthz answers. */
  startProxy(name: string, env?: NodeJS.ProcessEnv): Promise<string>;
  proxy(name: string): Child | undefined;
  /** The proxy's PROXY_DATA_DIR (its settlement outbox), kept across restarts. */
  dataDir(name: string): string;
  stopProxy(name: string, signal?: NodeJS.Signals): Promise<number | string | undefined>;
  /** A key's money as the control plane has it committed now (GET /internal/money). */
  money(keyId: string): Promise<{ balance_micros: number; key_remaining_micros: number | null }>;
  /** Reports usage as a proxy would (POST /internal/usage). */
  report(...reports: UsageReport[]): Promise<void>;
  /** The last lines each child printed (the control plane and every proxy), for a failing assertion's message. */
  logs(): string;
  close(): Promise<void>;
}

export async function startProcessPlane(storeEnv: NodeJS.ProcessEnv, modelsFile: string): Promise<ProcessPlane> {
  const token = randomBytes(32).toString('base64url');
  const cpPort = await freePort();
  const controlPlaneUrl = `http://127.0.0.1:${cpPort}`;
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    DATA_PLANE_TOKEN: token,
    MODELS_FILE: modelsFile,
    SECRETS_KEY: TEST_SECRETS_KEY,
    TEST_PRIMARY_API_KEY: UPSTREAM_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'warn',
  };
  let cp: Child | undefined;
  const proxies = new Map<string, { child?: Child; port: number; dataDir: string; env: NodeJS.ProcessEnv }>();
  const tsx = ['--import', 'tsx'];

  const plane: ProcessPlane = {
    token,
    controlPlaneUrl,
    async startControlPlane() {
      cp = run([...tsx, 'bin/control-plane.ts'], { ...base, ...storeEnv, CONTROL_PLANE_PORT: String(cpPort) });
      const child = cp;
      await waitFor('control plane', 60_000, async () => {
        if (child.process.exitCode !== null) throw new Error(`control plane exited: ${child.output()}`);
        const res = await fetch(`${controlPlaneUrl}/internal/changes/version`, { headers: { authorization: `Bearer ${token}` } });
        return res.status === 200;
      });
    },
    async stopControlPlane(signal = 'SIGKILL') {
      await kill(cp, signal);
    },
    async startProxy(name, env) {
      let p = proxies.get(name);
      if (!p) {
        p = { port: await freePort(), dataDir: mkdtempSync(join(tmpdir(), `tollgate-faults-${name}-`)), env: env ?? {} };
        proxies.set(name, p);
      }
      const entry = p;
      entry.child = run([...tsx, 'bin/proxy.ts'], {
        ...base,
        CONTROL_PLANE_URL: controlPlaneUrl,
        PROXY_PORT: String(entry.port),
        PROXY_DATA_DIR: entry.dataDir,
        ...entry.env,
      });
      const child = entry.child;
      const url = `http://127.0.0.1:${entry.port}`;
      await waitFor(`proxy ${name}`, 60_000, async () => {
        if (child.process.exitCode !== null) throw new Error(`proxy ${name} exited: ${child.output()}`);
        return (await fetch(`${url}/healthz`)).status === 200;
      });
      return url;
    },
    proxy: (name) => proxies.get(name)?.child,
    dataDir: (name) => proxies.get(name)!.dataDir,
    async stopProxy(name, signal = 'SIGKILL') {
      return kill(proxies.get(name)?.child, signal);
    },
    async money(keyId) {
      const res = await fetch(`${controlPlaneUrl}/internal/money/${keyId}`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`money: ${res.status}`);
      return ((await res.json()) as { money: { balance_micros: number; key_remaining_micros: number | null } }).money;
    },
    async report(...reports) {
      const res = await fetch(`${controlPlaneUrl}/internal/usage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reports }),
      });
      if (res.status !== 200) throw new Error(`usage: ${res.status} ${await res.text()}`);
    },
    logs() {
      const tail = (label: string, child: Child | undefined) =>
        child ? `--- ${label} (${child.state()}):\n${child.output().slice(-3000)}` : `--- ${label}: (not started)`;
      return [tail('control plane', cp), ...[...proxies].map(([name, p]) => tail(`proxy ${name}`, p.child))].join('\n');
    },
    async close() {
      for (const p of proxies.values()) await kill(p.child);
      await kill(cp);
      for (const p of proxies.values()) rmSync(p.dataDir, { recursive: true, force: true });
      rmSync(dirname(modelsFile), { recursive: true, force: true });
    },
  };
  return plane;
}

/** Polls until `check` holds, or fails with the last value seen once `ms` have passed. */
export async function eventually<T>(what: string, ms: number, read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    try {
      last = await read();
      if (check(last)) return last;
    } catch {
      /* not reachable yet: try again */
    }
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${ms} ms (last seen: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
