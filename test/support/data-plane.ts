import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneDeps } from '../../control-plane/deps.js';
import type { ApiKey, KeyKind } from '../../control-plane/domain.js';
import { api_key_insert, api_key_revoke } from '../../control-plane/stores/api-keys.js';
import { change_feed_publish } from '../../control-plane/stores/change-feed.js';
import { team_insert, team_models_replace } from '../../control-plane/stores/teams.js';
import { workspace_credit } from '../../control-plane/stores/workspaces.js';
import { createLogger, type Logger } from '../../shared/logger.js';
import { displayPrefix, generateSecret, lastFour, sha256Hex } from '../../shared/secrets.js';
import { startProxy, type RunningProxy } from '../../proxy/runtime.js';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from './fake-upstream/index.js';
import { seedOrg, startTestControlPlane, testConfig, type TestControlPlane } from './control-plane.js';
import type { StoreContext } from './stores.js';
import { skipped } from './skips.js';
import type { Registry } from '../../shared/metrics.js';
import type { BudgetPeriod } from '../../shared/budget-period.js';
import type { NowMs } from '../../shared/clock.js';

export const UPSTREAM_SECRET = 'sk-upstream-provider-secret';

export interface SeededKey {
  slug: string;
  workspaceId: string;
  orgId: string;
  teamId: string;
  keyId: string;
  secret: string;
  key: ApiKey;
  /** The org owner's console token (for the console routes). */
  consoleToken: string;
}

export interface KeySeed {
  balanceUsd?: number;
  models?: string[];
  budgetUsd?: number | null;
  budgetPeriod?: BudgetPeriod | null;
  rpm?: number | null;
  tpm?: number | null;
  expiresAt?: Date | null;
  kind?: KeyKind;
}

/** What a seeded key's row takes from its secret (stored only hashed) and from the seed's limits. */
function keyColumns(secret: string, seed: KeySeed) {
  return {
    key_hash: sha256Hex(secret),
    prefix: displayPrefix(secret),
    last4: lastFour(secret),
    budget_usd: seed.budgetUsd ?? null,
    budget_period: seed.budgetPeriod ?? null,
    rpm: seed.rpm ?? null,
    tpm: seed.tpm ?? null,
    expires_at: seed.expiresAt ?? null,
  };
}

/** An organization with one team and one key, seeded through the stores (no console routes needed). */
export async function seedKey(deps: ControlPlaneDeps, seed: KeySeed = {}): Promise<SeededKey> {
  const org = await seedOrg(deps);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const team = await team_insert(tx, { org_id: org.org_id, workspace_id: org.workspace_id, name: 'Core' });
    await team_models_replace(tx, team.id, seed.models ?? ['tg/sonnet', 'tg/haiku']);
    if ((seed.balanceUsd ?? 100) !== 0) {
      await workspace_credit(tx, { workspace_id: org.workspace_id, amount_usd: seed.balanceUsd ?? 100, actor_user_id: null, now });
    }
    const secret = generateSecret('apiKey');
    const kind = seed.kind ?? 'team';
    const key = await api_key_insert(tx, {
      org_id: org.org_id,
      workspace_id: org.workspace_id,
      team_id: team.id,
      kind,
      owner_user_id: kind === 'personal' ? org.owner_user_id : null,
      name: 'test key',
      ...keyColumns(secret, seed),
      created_by: null,
      now,
    });
    return {
      slug: org.workspace_slug,
      workspaceId: org.workspace_id,
      orgId: org.org_id,
      teamId: team.id,
      keyId: key.id,
      secret,
      key,
      consoleToken: org.console_token,
    };
  });
}

/** Adds a second key on an existing team. */
export async function seedAnotherKey(deps: ControlPlaneDeps, base: SeededKey, seed: KeySeed = {}): Promise<SeededKey> {
  const secret = generateSecret('apiKey');
  const key = await api_key_insert(deps.db, {
    org_id: base.orgId,
    workspace_id: base.workspaceId,
    team_id: base.teamId,
    kind: 'team',
    owner_user_id: null,
    name: 'another key',
    ...keyColumns(secret, seed),
    created_by: null,
    now: deps.clock.now(),
  });
  return { ...base, keyId: key.id, secret, key };
}

/** Revokes as the console does: the change and its feed row in one transaction. */
export async function revokeKey(deps: ControlPlaneDeps, keyId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await api_key_revoke(tx, keyId, deps.clock.now());
    await change_feed_publish(tx, 'key', keyId);
  });
}

export async function creditWorkspace(deps: ControlPlaneDeps, workspaceId: string, amountUsd: number): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await workspace_credit(tx, { workspace_id: workspaceId, amount_usd: amountUsd, actor_user_id: null, now: deps.clock.now() });
    await change_feed_publish(tx, 'workspace', workspaceId);
  });
}

/** Balance, key spend, and the ledger rows that billed the key (a failed call's row records it at no cost). */
export async function moneyOf(deps: ControlPlaneDeps, seeded: SeededKey): Promise<{ balance: number; spend: number; entries: number }> {
  const [row] = await deps.db.query<{ balance: number; spend: number; entries: number }>(
    `SELECT w.balance_usd::float8 AS balance, k.spend_usd::float8 AS spend,
            (SELECT count(*)::int FROM ledger_entries l WHERE l.key_id = k.id AND l.kind = 'usage' AND l.amount_usd <> 0) AS entries
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE k.id = $1`,
    [seeded.keyId],
  );
  return row!;
}

/** A proxy on port 0 pointed at the test control plane, with every provider aimed at the fake. */
export async function startTestProxy(
  cp: TestControlPlane,
  upstream: Pick<FakeUpstream, 'chatCompletionsBaseUrl' | 'messagesBaseUrl' | 'responsesBaseUrl' | 'geminiBaseUrl'>,
  env: NodeJS.ProcessEnv = {},
  { logger: given, ...options }: { changePush?: boolean; now?: NowMs; logger?: Logger } = {},
): Promise<RunningProxy> {
  // Each proxy its own outbox directory, unless the test names one (to restart a proxy on it).
  const dataDir = env.PROXY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'tollgate-proxy-'));
  const config = testConfig({ TEST_PRIMARY_API_KEY: UPSTREAM_SECRET, PROXY_HOLD_FENCE_MS: '200', ...env, PROXY_DATA_DIR: dataDir });
  config.dataPlaneToken = cp.deps.config.dataPlaneToken;
  // Each provider keeps the formats the models file gives it (some speak only one).
  for (const p of config.models.providers.values()) {
    if (p.endpoints.chat) p.endpoints.chat.base_url = upstream.chatCompletionsBaseUrl;
    // A Bedrock provider keeps its own endpoint (a test gives it the Bedrock fake's).
    if (p.endpoints.messages && !p.bedrock) p.endpoints.messages.base_url = upstream.messagesBaseUrl;
    if (p.endpoints.responses) p.endpoints.responses.base_url = upstream.responsesBaseUrl;
    if (p.endpoints.gemini) p.endpoints.gemini.base_url = upstream.geminiBaseUrl;
  }
  const logger = given ?? createLogger(process.env.TEST_LOG_LEVEL || 'silent', 'test-proxy');
  const proxy = await startProxy(config, logger, { port: 0, host: '127.0.0.1', controlPlaneUrl: cp.url, ...options });
  if (env.PROXY_DATA_DIR) return proxy;
  return {
    ...proxy,
    async close(graceMs?: number) {
      await proxy.close(graceMs);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ProxyOptions {
  /** This proxy's settings, on top of the data plane's shared `env`. */
  env?: NodeJS.ProcessEnv;
  /** false: the proxy learns of changes only by polling, never from the control plane's push stream. */
  changePush?: boolean;
}

export interface DataPlaneOptions {
  /** How the fake provider starts (e.g. speaking only one format). */
  fake?: FakeUpstreamOptions;
  /** Settings every proxy gets (PROXY_* limits and timeouts, REDIS_URL, …). */
  env?: NodeJS.ProcessEnv;
  /** One entry per proxy to start; by default a single proxy with just `env`. */
  proxies?: ProxyOptions[];
  /** Counts the control plane's requests and store calls into this registry. */
  controlPlaneRegistry?: Registry;
}

/** The fake upstream, the real control plane over the suite's store, and proxies aimed at both. */
export interface DataPlane {
  fake: FakeUpstream;
  cp: TestControlPlane;
  /** The first of `proxies`. */
  proxy: RunningProxy;
  proxies: RunningProxy[];
  /** Stops the proxies, then the fake, then the control plane; safe after a test has stopped the control plane itself. */
  close(): Promise<void>;
}

/** Starts a whole data plane for a suite; what it started is stopped again if a later part fails to start. */
export async function startDataPlane(store: StoreContext, options: DataPlaneOptions = {}): Promise<DataPlane> {
  const fake = await startFakeUpstream(options.fake);
  const proxies: RunningProxy[] = [];
  let cp: TestControlPlane | undefined;
  const close = async () => {
    for (const p of proxies) await p.close();
    await fake.close();
    await cp?.close();
  };
  try {
    cp = await startTestControlPlane(store.db, { registry: options.controlPlaneRegistry });
    for (const p of options.proxies ?? [{}]) {
      proxies.push(await startTestProxy(cp, fake, { ...options.env, ...p.env }, { changePush: p.changePush }));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { fake, cp, proxy: proxies[0]!, proxies, close };
}

export const TEST_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** A unique Redis key prefix per run, or undefined (reported skip) when Redis is absent outside CI. */
export async function redisForTests(what: string): Promise<string | undefined> {
  const { Redis } = await import('ioredis');
  const probe = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null });
  try {
    await probe.connect();
    await probe.ping();
    return `tollgate-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  } catch (err) {
    if (process.env.CI) throw new Error(`Redis is required in CI but unreachable at ${TEST_REDIS_URL}: ${(err as Error).message}`, { cause: err });
    skipped(what, `no Redis at ${TEST_REDIS_URL}`);
    return undefined;
  } finally {
    probe.disconnect();
  }
}
