import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { startProxy, type RunningProxy } from '../../../proxy/runtime.js';
import { createLogger, type Logger } from '../../../shared/logger.js';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../control-plane.js';
import { seedKey, type SeededKey } from '../data-plane.js';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../fake-upstream/index.js';
import type { StoreContext } from '../stores.js';
import { startFakeAzureOpenAi, type FakeAzureOpenAi } from './azure-openai.js';
import { startFakeEntra, type FakeEntra } from './entra.js';
import { startFakeGoogleToken, type FakeGoogleToken } from './google-token.js';
import { startFakeVertex, type FakeVertex } from './vertex.js';

const PRICES = { input_usd_per_mtok: 3, output_usd_per_mtok: 15, max_output_tokens: 4096 };

/**
 * A control plane and a proxy whose providers sign in to their clouds, each
 * cloud a fake that takes only its own identity platform's tokens:
 * - `tg/sonnet` on a Vertex provider (`claude-sonnet-4-5@20250929`, project
 *   `test-project`, `us-east5`), Google tokens from a service-account key,
 *   and `tg/gemini` on the same provider (`gemini-2.5-flash`, Google's own);
 * - `tg/gpt` on Azure OpenAI with Entra ID (client secret), `tg/gpt-unset` on
 *   one whose tenant variable is not set, `tg/gpt-cert` on one signing in
 *   with the certificate at `AZURE_CLIENT_CERTIFICATE_PATH`, and
 *   `tg/gpt-cert-wrong` on one whose app has another certificate registered;
 * all answered in the end by one fake upstream, billed at $3/$15 per million.
 */
export interface CloudPlane {
  upstream: FakeUpstream;
  google: FakeGoogleToken;
  vertex: FakeVertex;
  entra: FakeEntra;
  azure: FakeAzureOpenAi;
  cp: TestControlPlane;
  proxy: RunningProxy;
  /** A key allowed every alias, with a balance. */
  key: SeededKey;
  close(): Promise<void>;
}

/** What the proxy reads from its environment, as in production; set on this process while the plane runs. */
const CLOUD_ENV = [
  'GOOGLE_APPLICATION_CREDENTIALS',
  'AOAI_TENANT',
  'AOAI_CLIENT',
  'AOAI_SECRET',
  'AZURE_CLIENT_CERTIFICATE_PATH',
  'AOAI_CERT_CLIENT',
  'AOAI_OTHER_CERT_CLIENT',
] as const;

function modelsFile(vertex: FakeVertex, azure: FakeAzureOpenAi, entra: FakeEntra): unknown {
  const azureChat = { endpoints: { chat_completions: { base_url: azure.baseUrl, auth_header: 'authorization' } }, authority_url: entra.authorityUrl };
  return {
    alias_prefix: 'tg',
    providers: {
      vertex: { kind: 'vertex', project: 'test-project', location: 'us-east5', endpoint_url: vertex.url },
      azure: { ...azureChat, azure_ad: { tenant_id_env: 'AOAI_TENANT', client_id_env: 'AOAI_CLIENT', client_secret_env: 'AOAI_SECRET' } },
      'azure-unset': {
        ...azureChat,
        azure_ad: { tenant_id_env: 'AOAI_TENANT_UNSET', client_id_env: 'AOAI_CLIENT', client_secret_env: 'AOAI_SECRET' },
      },
      // No client_secret_env: these sign in with the certificate at AZURE_CLIENT_CERTIFICATE_PATH.
      'azure-cert': { ...azureChat, azure_ad: { tenant_id_env: 'AOAI_TENANT', client_id_env: 'AOAI_CERT_CLIENT' } },
      'azure-cert-wrong': { ...azureChat, azure_ad: { tenant_id_env: 'AOAI_TENANT', client_id_env: 'AOAI_OTHER_CERT_CLIENT' } },
    },
    models: [
      { alias: 'tg/sonnet', provider: 'vertex', upstream_model: 'claude-sonnet-4-5@20250929', client_names: ['claude-sonnet-4-5*'], ...PRICES },
      { alias: 'tg/gemini', provider: 'vertex', upstream_model: 'gemini-2.5-flash', ...PRICES },
      { alias: 'tg/gpt', provider: 'azure', upstream_model: 'gpt-4o', ...PRICES },
      { alias: 'tg/gpt-unset', provider: 'azure-unset', upstream_model: 'gpt-4o', ...PRICES },
      { alias: 'tg/gpt-cert', provider: 'azure-cert', upstream_model: 'gpt-4o', ...PRICES },
      { alias: 'tg/gpt-cert-wrong', provider: 'azure-cert-wrong', upstream_model: 'gpt-4o', ...PRICES },
    ],
  };
}

export async function startCloudPlane(store: StoreContext, fake: FakeUpstreamOptions = {}, given?: Logger): Promise<CloudPlane> {
  const trusted = tls.getCACertificates('default');
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-clouds-'));
  const upstream = await startFakeUpstream(fake);
  const google = await startFakeGoogleToken();
  const vertex = await startFakeVertex({ tokens: google.tokens, upstream });
  const entra = await startFakeEntra();
  // The fake login host's certificate, trusted by this process's TLS clients as an operator's CA bundle would be.
  tls.setDefaultCACertificates([...trusted, entra.cert]);
  const azure = await startFakeAzureOpenAi({ tokens: entra.tokens, upstream });
  const file = join(dir, 'models.json');
  writeFileSync(file, JSON.stringify(modelsFile(vertex, azure, entra)));
  const certApp = entra.certificateApp();
  const certificate = join(dir, 'entra-app.pem');
  writeFileSync(certificate, certApp.pem, { mode: 0o600 });
  Object.assign(process.env, {
    GOOGLE_APPLICATION_CREDENTIALS: google.writeKeyFile(dir),
    AOAI_TENANT: entra.tenantId,
    AOAI_CLIENT: entra.clientId,
    AOAI_SECRET: entra.clientSecret,
    AZURE_CLIENT_CERTIFICATE_PATH: certificate,
    AOAI_CERT_CLIENT: certApp.clientId,
    // An app registered with a certificate of its own: the one above is not its.
    AOAI_OTHER_CERT_CLIENT: entra.certificateApp().clientId,
  });
  const cp = await startTestControlPlane(store.db, { env: { MODELS_FILE: file } });
  const key = await seedKey(cp.deps, {
    models: ['tg/sonnet', 'tg/gemini', 'tg/gpt', 'tg/gpt-unset', 'tg/gpt-cert', 'tg/gpt-cert-wrong'],
    balanceUsd: 100,
  });
  const config = testConfig({ MODELS_FILE: file, PROXY_DATA_DIR: join(dir, 'proxy'), PROXY_HOLD_FENCE_MS: '200' });
  config.dataPlaneToken = cp.deps.config.dataPlaneToken;
  const logger = given ?? createLogger(process.env.TEST_LOG_LEVEL || 'silent', 'test-proxy');
  const proxy = await startProxy(config, logger, { port: 0, host: '127.0.0.1', controlPlaneUrl: cp.url });
  return {
    upstream,
    google,
    vertex,
    entra,
    azure,
    cp,
    proxy,
    key,
    async close() {
      await proxy.close();
      await cp.close();
      await Promise.all([upstream.close(), google.close(), vertex.close(), entra.close(), azure.close()]);
      tls.setDefaultCACertificates(trusted);
      for (const name of CLOUD_ENV) delete process.env[name];
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
