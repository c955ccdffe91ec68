import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../shared/logger.js';
import { startProxy, type RunningProxy } from '../../proxy/runtime.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream/index.js';
import { startTestControlPlane, testConfig, type TestControlPlane } from './control-plane.js';
import { UPSTREAM_SECRET } from './data-plane.js';
import type { StoreContext } from './stores.js';
import type { Clock } from '../../shared/clock.js';

/**
 * Three fake providers (a, b, c) and a models file whose aliases spread over
 * them, for the tests of deployments, failover and fallbacks. Provider
 * `dead` is a port nothing listens on (connection refused); `c-messages`
 * speaks only Messages, so a Chat Completions call to it is translated.
 */
export interface DeploymentPlane {
  fakes: { a: FakeUpstream; b: FakeUpstream; c: FakeUpstream };
  cp: TestControlPlane;
  proxies: RunningProxy[];
  close(): Promise<void>;
}

const price = { input_usd_per_mtok: 3, output_usd_per_mtok: 15, max_output_tokens: 4096 };

function modelsFile(fakes: DeploymentPlane['fakes']) {
  const both = (f: FakeUpstream) => ({
    chat_completions_base_url: f.chatCompletionsBaseUrl,
    messages_base_url: f.messagesBaseUrl,
    responses_base_url: f.responsesBaseUrl,
    gemini_base_url: f.geminiBaseUrl,
    api_key_env: 'TEST_PRIMARY_API_KEY',
  });
  return {
    alias_prefix: 'tg',
    providers: {
      a: both(fakes.a),
      b: both(fakes.b),
      c: both(fakes.c),
      'c-messages': { messages_base_url: fakes.c.messagesBaseUrl, api_key_env: 'TEST_PRIMARY_API_KEY' },
      dead: {
        chat_completions_base_url: 'http://127.0.0.1:1/v1',
        messages_base_url: 'http://127.0.0.1:1/anthropic',
        api_key_env: 'TEST_PRIMARY_API_KEY',
      },
    },
    models: [
      { alias: 'tg/single', provider: 'a', upstream_model: 'm-a', ...price },
      {
        alias: 'tg/ordered',
        deployments: [
          { provider: 'a', upstream_model: 'm-a' },
          { provider: 'b', upstream_model: 'm-b' },
        ],
        ...price,
      },
      {
        alias: 'tg/weighted',
        deployments: [
          { provider: 'a', upstream_model: 'm-a', weight: 3 },
          { provider: 'b', upstream_model: 'm-b', weight: 1 },
        ],
        ...price,
      },
      {
        alias: 'tg/three',
        deployments: [
          { provider: 'a', upstream_model: 'm-a' },
          { provider: 'b', upstream_model: 'm-b' },
          { provider: 'c', upstream_model: 'm-c' },
        ],
        ...price,
      },
      {
        alias: 'tg/dead-first',
        deployments: [
          { provider: 'dead', upstream_model: 'm-dead' },
          { provider: 'a', upstream_model: 'm-a' },
        ],
        ...price,
      },
      {
        alias: 'tg/with-fallback',
        deployments: [
          { provider: 'a', upstream_model: 'm-a' },
          { provider: 'b', upstream_model: 'm-b' },
        ],
        fallbacks: ['tg/forbidden', 'tg/fallback'],
        ...price,
      },
      // Each cooldown test its own deployments (health is kept per provider/upstream_model).
      ...['cool-1', 'cool-2', 'cool-3', 'cool-4', 'cool-5', 'health-1', 'health-2'].map((n) => ({
        alias: `tg/${n}`,
        deployments: [
          { provider: 'a', upstream_model: `${n}-a` },
          { provider: 'b', upstream_model: `${n}-b` },
        ],
        ...price,
      })),
      // Even weights: two proxies' wheels each start on a, so a pin to b shows only through shared affinity.
      {
        alias: 'tg/affinity-1',
        deployments: [
          { provider: 'a', upstream_model: 'affinity-1-a', weight: 1 },
          { provider: 'b', upstream_model: 'affinity-1-b', weight: 1 },
        ],
        ...price,
      },
      // Not on the test team's list: skipped.
      { alias: 'tg/forbidden', provider: 'b', upstream_model: 'm-forbidden', ...price },
      {
        alias: 'tg/fallback',
        provider: 'c-messages',
        upstream_model: 'm-fallback',
        input_usd_per_mtok: 6,
        output_usd_per_mtok: 30,
        max_output_tokens: 4096,
      },
    ],
  };
}

export const DEPLOYMENT_ALIASES = [
  'tg/single',
  'tg/ordered',
  'tg/weighted',
  'tg/three',
  'tg/dead-first',
  'tg/with-fallback',
  'tg/fallback',
  'tg/cool-1',
  'tg/cool-2',
  'tg/cool-3',
  'tg/cool-4',
  'tg/cool-5',
  'tg/health-1',
  'tg/health-2',
  'tg/affinity-1',
];

export async function startDeploymentPlane(
  store: StoreContext,
  // `clock`: the control plane's (reports' age); the proxies keep the real time. `logger`: the proxies' (access log).
  options: { env?: NodeJS.ProcessEnv; proxies?: number; clock?: Clock; logger?: Logger } = {},
): Promise<DeploymentPlane> {
  const fakes = { a: await startFakeUpstream(), b: await startFakeUpstream(), c: await startFakeUpstream() };
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-deployments-'));
  const file = join(dir, 'models.json');
  writeFileSync(file, JSON.stringify(modelsFile(fakes)));
  // The control plane reads the same models file: the console lists these aliases and their deployments.
  const cp = await startTestControlPlane(store.db, { env: { MODELS_FILE: file, TEST_PRIMARY_API_KEY: UPSTREAM_SECRET }, clock: options.clock });
  const proxies: RunningProxy[] = [];
  for (let i = 0; i < (options.proxies ?? 1); i++) {
    const config = testConfig({
      TEST_PRIMARY_API_KEY: UPSTREAM_SECRET,
      PROXY_HOLD_FENCE_MS: '200',
      ...options.env,
      MODELS_FILE: file,
      PROXY_DATA_DIR: join(dir, `proxy-${i}`),
    });
    config.dataPlaneToken = cp.deps.config.dataPlaneToken;
    const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL || 'silent', 'test-proxy');
    proxies.push(await startProxy(config, logger, { port: 0, host: '127.0.0.1', controlPlaneUrl: cp.url }));
  }
  return {
    fakes,
    cp,
    proxies,
    async close() {
      for (const p of proxies) await p.close();
      for (const f of Object.values(fakes)) await f.close();
      await cp.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Which fakes took model calls since the last reset, by name. */
export function servedBy(fakes: DeploymentPlane['fakes']): Record<'a' | 'b' | 'c', number> {
  return { a: fakes.a.requests.length, b: fakes.b.requests.length, c: fakes.c.requests.length };
}

export function resetFakes(fakes: DeploymentPlane['fakes']): void {
  for (const f of Object.values(fakes)) f.reset();
}
