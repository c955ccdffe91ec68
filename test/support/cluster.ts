import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBalancer, type Balancer } from './balancer.js';
import { TEST_SECRETS_KEY } from './control-plane.js';
import { UPSTREAM_SECRET } from './data-plane.js';
import { freePort, kill, run, waitFor, type Child } from './processes.js';

/**
 * The shape deploy/kubernetes/ runs, as child processes: two control planes
 * on one PostgreSQL, three proxies sharing one Redis. Each proxy reaches the
 * control planes through a TCP balancer of its own (balancer.ts), as pods
 * reach a Service: one CONTROL_PLANE_URL, whichever replica answers; a
 * proxy's own balancer stands for its network path, so stopping it cuts
 * that proxy off alone. Console and SCIM clients come in through one more
 * balancer (`publicUrl`), the Service in front of the control planes.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Cluster {
  token: string;
  /** The control planes' own URLs (index 0 and 1). */
  controlPlanes: string[];
  /** The Service in front of both control planes, for console and SCIM clients. */
  publicUrl: string;
  publicLink: Balancer;
  /** The proxies' URLs by name. */
  proxies: Map<string, string>;
  /** A proxy's link to the control planes. */
  link(proxy: string): Balancer;
  startControlPlane(i: number): Promise<void>;
  stopControlPlane(i: number, signal?: NodeJS.Signals): Promise<number | string | undefined>;
  startProxy(name: string): Promise<void>;
  stopProxy(name: string, signal?: NodeJS.Signals): Promise<number | string | undefined>;
  /** What each child printed last, for a failing assertion's message. */
  logs(): string;
  close(): Promise<void>;
}

export interface ClusterOptions {
  databaseUrl: string;
  redisUrl: string;
  modelsFile: string;
  proxyNames?: string[];
  /** Settings for every proxy (a fault's shortened windows). */
  proxyEnv?: NodeJS.ProcessEnv;
  /** A proxy's own PROXY_DATA_DIR (a small filesystem), by name. */
  dataDirs?: Record<string, string>;
}

/**
 * The children run the compiled service (dist/), as production does: a
 * start under tsx costs seconds more on a busy machine, and the rolling
 * restart starts five of them. `buildService` brings dist/ up to date first.
 */
const ENTRY = (name: string) => join('dist', 'bin', `${name}.js`);

/** `npm run build -- --if-stale`: compiles dist/ unless it is newer than every source. */
export function buildService(): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', 'bin/build.ts', '--if-stale'], { cwd: ROOT }, (err, _out, stderr) =>
      err ? reject(new Error(`building dist/ failed: ${stderr}`, { cause: err })) : resolve(),
    ),
  );
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const token = randomBytes(32).toString('base64url');
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    DATA_PLANE_TOKEN: token,
    MODELS_FILE: options.modelsFile,
    SECRETS_KEY: TEST_SECRETS_KEY,
    TEST_PRIMARY_API_KEY: UPSTREAM_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'warn',
    // Five processes on one host: no two may want the same metrics port.
    METRICS_ENABLED: 'false',
  };
  const cpPorts = [await freePort(), await freePort()];
  const publicLb = await startBalancer(cpPorts);
  const cps: (Child | undefined)[] = [undefined, undefined];
  const names = options.proxyNames ?? ['p1', 'p2', 'p3'];
  const prefix = `cluster-${randomBytes(4).toString('hex')}`;
  const proxies = new Map<string, { child?: Child; port: number; dataDir: string; ownDir: boolean; link: Balancer }>();
  for (const name of names) {
    const own = options.dataDirs?.[name];
    proxies.set(name, {
      port: await freePort(),
      dataDir: own ?? mkdtempSync(join(tmpdir(), `tollgate-cluster-${name}-`)),
      ownDir: !own,
      link: await startBalancer(cpPorts),
    });
  }

  const cluster: Cluster = {
    token,
    controlPlanes: cpPorts.map((p) => `http://127.0.0.1:${p}`),
    publicUrl: publicLb.url,
    publicLink: publicLb,
    proxies: new Map([...proxies].map(([name, p]) => [name, `http://127.0.0.1:${p.port}`])),
    link: (name) => proxies.get(name)!.link,
    async startControlPlane(i) {
      const child = run([ENTRY('control-plane')], {
        ...base,
        DATABASE_URL: options.databaseUrl,
        CONTROL_PLANE_PORT: String(cpPorts[i]),
        PUBLIC_BASE_URL: publicLb.url,
        SCIM_RATE_LIMIT_PER_MINUTE: '1000000',
        AUTH_RATE_LIMIT_PER_IP_PER_MINUTE: '1000000',
        AUTH_RATE_LIMIT_PER_ORG_PER_MINUTE: '1000000',
      });
      cps[i] = child;
      await waitFor(`control plane ${i}`, 60_000, async () => {
        if (child.process.exitCode !== null) throw new Error(`control plane ${i} exited: ${child.output()}`);
        const res = await fetch(`${cluster.controlPlanes[i]}/readyz`);
        return res.status === 200;
      });
    },
    stopControlPlane: (i, signal = 'SIGKILL') => kill(cps[i], signal),
    async startProxy(name) {
      const p = proxies.get(name)!;
      const child = run([ENTRY('proxy')], {
        ...base,
        CONTROL_PLANE_URL: p.link.url,
        PROXY_PORT: String(p.port),
        PROXY_DATA_DIR: p.dataDir,
        REDIS_URL: options.redisUrl,
        PROXY_REDIS_PREFIX: prefix,
        ...options.proxyEnv,
      });
      p.child = child;
      const url = cluster.proxies.get(name)!;
      await waitFor(`proxy ${name}`, 60_000, async () => {
        if (child.process.exitCode !== null) throw new Error(`proxy ${name} exited: ${child.output()}`);
        return (await fetch(`${url}/readyz`)).status === 200;
      });
    },
    stopProxy: (name, signal = 'SIGKILL') => kill(proxies.get(name)?.child, signal),
    logs() {
      const tail = (label: string, child: Child | undefined) =>
        child ? `--- ${label} (${child.state()}):\n${child.output().slice(-2500)}` : `--- ${label}: (not started)`;
      return [...cps.map((c, i) => tail(`control plane ${i}`, c)), ...[...proxies].map(([name, p]) => tail(`proxy ${name}`, p.child))].join('\n');
    },
    async close() {
      await Promise.all([...proxies.values()].map((p) => kill(p.child)));
      await Promise.all(cps.map((c) => kill(c)));
      for (const p of proxies.values()) {
        await p.link.stop();
        if (p.ownDir) rmSync(p.dataDir, { recursive: true, force: true });
      }
      await publicLb.stop();
    },
  };
  await Promise.all([cluster.startControlPlane(0), cluster.startControlPlane(1)]);
  await Promise.all(names.map((n) => cluster.startProxy(n)));
  return cluster;
}
