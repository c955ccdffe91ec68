import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { compiledArgs, freePort, processTree, readyWhenHealthy, REPO_ROOT, startProcess, type Placement, type Proc } from './procs.js';

const execFileAsync = promisify(execFile);

/** The provider key the fake upstream receives; never a real secret. */
export const UPSTREAM_KEY_ENV = 'BENCH_UPSTREAM_KEY';
export const UPSTREAM_KEY = 'sk-bench-upstream';
export const FAST_ALIAS = 'tg/bench';
export const PACED_ALIAS = 'tg/bench-paced';
/**
 * Aliases on providers that speak only the other format than the client's,
 * so calls to them are translated: key = the client's format.
 */
export const TRANSLATED_ALIASES = {
  fast: { chat: 'tg/bench-messages-only', messages: 'tg/bench-chat-only', responses: 'tg/bench-chat-only' },
  paced: { chat: 'tg/bench-paced-messages-only', messages: 'tg/bench-paced-chat-only', responses: 'tg/bench-paced-chat-only' },
} as const;

/** Three deployments of the instant upstream, spread evenly: the routed path on every call (bench `deployments`). */
export const THREE_ALIAS = 'tg/bench-three';
/** A refusing deployment (nothing listens on 127.0.0.1:1) first, then the instant upstream: a failover on every call. */
export const FAILOVER_ALIAS = 'tg/bench-failover';
/** The same, the refusing deployment named `localhost` (a name to resolve, two address families to try). */
export const FAILOVER_LOCALHOST_ALIAS = 'tg/bench-failover-localhost';

/** A models file pointing at the bench's two fake upstreams (instant, and paced SSE). */
export function writeModelsFile(dir: string, fastUrl: string, pacedUrl: string): string {
  const provider = (url: string) => ({
    chat_completions_base_url: `${url}/v1`,
    messages_base_url: `${url}/anthropic`,
    responses_base_url: `${url}/v1`,
    api_key_env: UPSTREAM_KEY_ENV,
  });
  const model = (alias: string, provider: string) => ({
    alias,
    provider,
    upstream_model: 'bench-model',
    input_usd_per_mtok: 3,
    output_usd_per_mtok: 15,
    max_output_tokens: 64000,
  });
  const messagesOnly = (url: string) => ({ messages_base_url: `${url}/anthropic`, api_key_env: UPSTREAM_KEY_ENV });
  const chatOnly = (url: string) => ({ chat_completions_base_url: `${url}/v1`, api_key_env: UPSTREAM_KEY_ENV });
  const file = join(dir, 'models.json');
  writeFileSync(
    file,
    JSON.stringify({
      alias_prefix: 'tg',
      providers: {
        fast: provider(fastUrl),
        paced: provider(pacedUrl),
        'fast-messages-only': messagesOnly(fastUrl),
        'fast-chat-only': chatOnly(fastUrl),
        'paced-messages-only': messagesOnly(pacedUrl),
        'paced-chat-only': chatOnly(pacedUrl),
        // Same upstream under other names: three deployments whose health is kept apart.
        'fast-2': provider(fastUrl),
        'fast-3': provider(fastUrl),
        refusing: provider('http://127.0.0.1:1'),
        'refusing-localhost': provider('http://localhost:1'),
      },
      models: [
        model(FAST_ALIAS, 'fast'),
        model(PACED_ALIAS, 'paced'),
        model(TRANSLATED_ALIASES.fast.chat, 'fast-messages-only'),
        model(TRANSLATED_ALIASES.fast.messages, 'fast-chat-only'),
        model(TRANSLATED_ALIASES.paced.chat, 'paced-messages-only'),
        model(TRANSLATED_ALIASES.paced.messages, 'paced-chat-only'),
        {
          ...model(THREE_ALIAS, 'fast'),
          provider: undefined,
          upstream_model: undefined,
          deployments: ['fast', 'fast-2', 'fast-3'].map((p) => ({ provider: p, upstream_model: 'bench-model', weight: 1 })),
        },
        {
          ...model(FAILOVER_ALIAS, 'fast'),
          provider: undefined,
          upstream_model: undefined,
          deployments: ['refusing', 'fast'].map((p) => ({ provider: p, upstream_model: 'bench-model' })),
        },
        {
          ...model(FAILOVER_LOCALHOST_ALIAS, 'fast'),
          provider: undefined,
          upstream_model: undefined,
          deployments: ['refusing-localhost', 'fast'].map((p) => ({ provider: p, upstream_model: 'bench-model' })),
        },
      ],
    }),
  );
  return file;
}

/**
 * `split`: control plane and proxy in their own processes (production shape), so the
 * proxy's CPU time is the proxy's alone. `combined`: `bin/start.ts`, both in one.
 * `whole`: `npm start` as a user runs it; its CPU is the whole process tree's.
 */
export type Shape = 'split' | 'combined' | 'whole';

export interface TollgateOptions {
  shape: Shape;
  /** `nice` level for a split-out control plane (0 = as the rest); keeps its work from delaying the driver core. */
  controlPlaneNice?: number;
  placement: Placement;
  modelsFile: string;
  /** PostgreSQL; unset → embedded PGlite in a temporary DATA_DIR. */
  databaseUrl?: string;
  redisUrl?: string;
  /** Reuse a DATA_DIR (e.g. to restart with an empty key cache over the same keys). */
  dataDir?: string;
  /** The checkout `npm start` runs in (`whole` only): another build to compare; this one by default. */
  root?: string;
  /** More environment for Tollgate's processes only (the guard's self-test preloads its regression this way). */
  env?: NodeJS.ProcessEnv;
}

export interface Tollgate {
  /** The checkout it runs from, whose CLI provisions it. */
  root: string;
  baseUrl: string;
  edgeUrl: string;
  dataDir: string;
  /** The process whose CPU and memory count as "the proxy". */
  proxy: Proc;
  controlPlane: Proc | undefined;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export async function startTollgate(options: TollgateOptions): Promise<Tollgate> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tollgate-bench-data-'));
  const controlPlanePort = await freePort();
  const proxyPort = await freePort();
  const baseUrl = `http://127.0.0.1:${controlPlanePort}`;
  const edgeUrl = `http://127.0.0.1:${proxyPort}`;
  const env: NodeJS.ProcessEnv = {
    DATA_DIR: dataDir,
    CONTROL_PLANE_PORT: String(controlPlanePort),
    PROXY_PORT: String(proxyPort),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: baseUrl,
    EDGE_BASE_URL: edgeUrl,
    MODELS_FILE: options.modelsFile,
    LOG_LEVEL: 'warn',
    // Any free port: a fixed one would collide between the halves and with other runs on the host.
    METRICS_PORT: '0',
    DATA_PLANE_TOKEN: randomBytes(32).toString('base64url'),
    CONTROL_PLANE_URL: baseUrl,
    [UPSTREAM_KEY_ENV]: UPSTREAM_KEY,
    // Its own Redis namespace, apart from anyone else's Tollgate on the same server.
    PROXY_REDIS_PREFIX: `tollgate-bench-${process.pid}-${controlPlanePort}`,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : { DATABASE_URL: '' }),
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : { REDIS_URL: '' }),
    // BENCH_CPU_PROF_DIR: a V8 CPU profile of each of Tollgate's processes, written there at exit.
    ...(process.env.BENCH_CPU_PROF_DIR ? { NODE_OPTIONS: `--import ${join(REPO_ROOT, 'bench/lib/cpu-profile-hook.mjs')}` } : {}),
    ...options.env,
  };
  let controlPlane: Proc | undefined;
  let proxy: Proc;
  if (options.shape === 'whole') {
    // Exactly what a user runs: npm, its prestart build check, and the service it starts, as one tree.
    proxy = await startProcess('tollgate (npm start)', 'npm', ['start', '--silent'], {
      cpus: options.placement.sut,
      cwd: options.root,
      env,
      ready: readyWhenHealthy(`${baseUrl}/healthz`, `${edgeUrl}/healthz`),
    });
    // npm may not pass SIGTERM on through its shell: signal the service itself too.
    const stopNpm = proxy.stop.bind(proxy);
    proxy.stop = async () => {
      for (const pid of processTree(proxy.pid).reverse()) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
      await stopNpm();
    };
  } else if (options.shape === 'combined') {
    const [node, args] = compiledArgs('bin/start.ts');
    proxy = await startProcess('tollgate', node, args, {
      cpus: options.placement.sut,
      env,
      ready: readyWhenHealthy(`${baseUrl}/healthz`, `${edgeUrl}/healthz`),
    });
  } else {
    const [node, cpArgs] = compiledArgs('bin/control-plane.ts');
    const nice = options.controlPlaneNice ?? 0;
    const [cpCommand, cpArgv] = nice ? ['nice', ['-n', String(nice), node, ...cpArgs]] : [node, cpArgs];
    controlPlane = await startProcess('control plane', cpCommand, cpArgv, {
      cpus: options.placement.driver,
      env,
      ready: readyWhenHealthy(`${baseUrl}/healthz`),
    });
    try {
      const [, proxyArgs] = compiledArgs('bin/proxy.ts');
      proxy = await startProcess('proxy', node, proxyArgs, {
        cpus: options.placement.sut,
        env,
        ready: readyWhenHealthy(`${edgeUrl}/healthz`),
      });
    } catch (err) {
      await controlPlane.stop();
      throw err;
    }
  }
  return {
    root: options.root ?? REPO_ROOT,
    baseUrl,
    edgeUrl,
    dataDir,
    proxy,
    controlPlane,
    env,
    async stop() {
      await proxy.stop();
      await controlPlane?.stop();
    },
  };
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The part of the bootstrap CLI's printed JSON the bench uses. The bench
 * drives Tollgate from outside, as an operator would, so it reads the CLI's
 * output rather than importing the control plane's types.
 */
export interface Bootstrapped {
  org_id: string;
  workspace_id: string;
  workspace_slug: string;
  owner_user_id: string;
  console_token: string;
}

/** `npm run -s cli -- bootstrap …` against the same store the service uses. */
export async function bootstrap(tollgate: Pick<Tollgate, 'env'> & { root?: string }, slug: string): Promise<Bootstrapped> {
  const { stdout } = await execFileAsync(
    'npm',
    ['run', '-s', 'cli', '--', 'bootstrap', '--org', slug, '--name', `Bench ${slug}`, '--owner', `owner@${slug}.example`],
    { cwd: tollgate.root ?? REPO_ROOT, env: { ...process.env, ...tollgate.env } },
  );
  return JSON.parse(stdout) as Bootstrapped;
}

/** A console API client with the bootstrap token. */
export function consoleClient(baseUrl: string, token: string) {
  return async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}

export type ConsoleCall = ReturnType<typeof consoleClient>;

export interface Provisioned {
  org: Bootstrapped;
  call: ConsoleCall;
  teamId: string;
  /** A team key whose budget and limits never trigger, so the full decision runs on every request. */
  key: string;
}

/** Budgets and limits far above anything a run can reach. */
export const UNREACHABLE_LIMITS = { budget_usd: 1_000_000, rpm: 100_000_000, tpm: 2_000_000_000 };

/** Every alias the bench's models file holds: what a provisioned team may call. */
const BENCH_ALIASES = [
  FAST_ALIAS,
  PACED_ALIAS,
  THREE_ALIAS,
  FAILOVER_ALIAS,
  FAILOVER_LOCALHOST_ALIAS,
  ...Object.values(TRANSLATED_ALIASES).flatMap((a) => [a.chat, a.messages]),
];

export async function provision(tollgate: Tollgate, slug = 'bench', models: readonly string[] = BENCH_ALIASES): Promise<Provisioned> {
  const org = await bootstrap(tollgate, slug);
  const call = consoleClient(tollgate.baseUrl, org.console_token);
  await call('POST', `/v1/workspaces/${org.workspace_id}/credits`, { amount_usd: 1_000_000 });
  const team = await call<{ id: string }>('POST', `/v1/workspaces/${org.workspace_id}/teams`, { name: 'bench' });
  await call('POST', `/v1/teams/${team.id}/members`, { user_id: org.owner_user_id });
  await call('PUT', `/v1/teams/${team.id}/models`, { models });
  const key = await createTeamKey(call, team.id, 'bench');
  return { org, call, teamId: team.id, key };
}

export async function createTeamKey(call: ConsoleCall, teamId: string, name: string): Promise<string> {
  const created = await call<{ key: string }>('POST', `/v1/teams/${teamId}/keys`, { kind: 'team', name, ...UNREACHABLE_LIMITS });
  return created.key;
}

/**
 * One more proxy process over a running Tollgate's control plane, with its
 * own port and `env` on top of the shared settings (e.g. metrics off).
 */
export async function startProxyVariant(
  tollgate: Tollgate,
  name: string,
  env: NodeJS.ProcessEnv,
  placement: Placement,
): Promise<{ proxy: Proc; edgeUrl: string }> {
  const proxyPort = await freePort();
  const edgeUrl = `http://127.0.0.1:${proxyPort}`;
  const [node, args] = compiledArgs('bin/proxy.ts');
  const proxy = await startProcess(name, node, args, {
    cpus: placement.sut,
    // Its own settlement outbox: a proxy refuses a directory another proxy holds.
    env: {
      ...tollgate.env,
      PROXY_PORT: String(proxyPort),
      EDGE_BASE_URL: edgeUrl,
      PROXY_DATA_DIR: join(tollgate.dataDir, `proxy-${proxyPort}`),
      ...env,
    },
    ready: readyWhenHealthy(`${edgeUrl}/healthz`),
  });
  return { proxy, edgeUrl };
}
