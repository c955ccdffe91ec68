import Anthropic from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import OpenAI from 'openai';
import { startProxy, type RunningProxy } from '../../../proxy/runtime.js';
import { createLogger } from '../../../shared/logger.js';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../../support/control-plane.js';
import { moneyOf, seedKey, type SeededKey } from '../../support/data-plane.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { startFakeAzureOpenAi, type FakeAzureOpenAi } from '../../support/fake-clouds/azure-openai.js';
import { startFakeEntra, type FakeEntra } from '../../support/fake-clouds/entra.js';
import { startFakeGoogleToken, type FakeGoogleToken } from '../../support/fake-clouds/google-token.js';
import { startFakeVertex, VERTEX_ANTHROPIC_VERSION, type FakeVertex } from '../../support/fake-clouds/vertex.js';
import { describeEachStore } from '../../support/stores.js';
import { gatewayKeyAuthClient } from '../../support/vertex-sdk-auth.js';

const PRICES = { input_usd_per_mtok: 3, output_usd_per_mtok: 15, max_output_tokens: 4096 };

/**
 * Providers that sign in to their cloud: a Vertex AI provider (Google tokens
 * from a service-account key, Anthropic's models at rawPredict) and an Azure
 * OpenAI provider with Entra ID tokens, each behind a fake that takes only
 * its own identity platform's unexpired tokens; the calls billed at the
 * price sheet.
 */
describeEachStore('proxy: Vertex AI and Azure OpenAI with Entra ID as providers', (store) => {
  let dir: string;
  let upstream: FakeUpstream;
  let google: FakeGoogleToken;
  let vertex: FakeVertex;
  let entra: FakeEntra;
  let azure: FakeAzureOpenAi;
  let cp: TestControlPlane;
  let proxy: RunningProxy;
  let key: SeededKey;
  let trusted: string[];

  before(async function () {
    this.timeout(60_000);
    trusted = tls.getCACertificates('default');
    dir = mkdtempSync(join(tmpdir(), 'tollgate-clouds-'));
    upstream = await startFakeUpstream();
    google = await startFakeGoogleToken();
    vertex = await startFakeVertex({ tokens: google.tokens, upstream });
    entra = await startFakeEntra();
    tls.setDefaultCACertificates([...trusted, entra.cert]);
    azure = await startFakeAzureOpenAi({ tokens: entra.tokens, upstream });
    const modelsFile = join(dir, 'models.json');
    writeFileSync(
      modelsFile,
      JSON.stringify({
        alias_prefix: 'tg',
        providers: {
          vertex: { kind: 'vertex', project: 'test-project', location: 'us-east5', endpoint_url: vertex.url },
          azure: {
            endpoints: { chat_completions: { base_url: azure.baseUrl, auth_header: 'authorization' } },
            azure_ad: { tenant_id_env: 'AOAI_TENANT', client_id_env: 'AOAI_CLIENT', client_secret_env: 'AOAI_SECRET' },
            authority_url: entra.authorityUrl,
          },
          'azure-unset': {
            endpoints: { chat_completions: { base_url: azure.baseUrl, auth_header: 'authorization' } },
            azure_ad: { tenant_id_env: 'AOAI_TENANT_UNSET', client_id_env: 'AOAI_CLIENT', client_secret_env: 'AOAI_SECRET' },
            authority_url: entra.authorityUrl,
          },
        },
        models: [
          { alias: 'tg/sonnet', provider: 'vertex', upstream_model: 'claude-sonnet-4-5@20250929', ...PRICES },
          { alias: 'tg/gpt', provider: 'azure', upstream_model: 'gpt-4o', ...PRICES },
          { alias: 'tg/gpt-unset', provider: 'azure-unset', upstream_model: 'gpt-4o', ...PRICES },
        ],
      }),
    );
    const env = {
      MODELS_FILE: modelsFile,
      GOOGLE_APPLICATION_CREDENTIALS: google.writeKeyFile(dir),
      AOAI_TENANT: entra.tenantId,
      AOAI_CLIENT: entra.clientId,
      AOAI_SECRET: entra.clientSecret,
    };
    cp = await startTestControlPlane(store.db, { env: { MODELS_FILE: modelsFile } });
    key = await seedKey(cp.deps, { models: ['tg/sonnet', 'tg/gpt', 'tg/gpt-unset'], balanceUsd: 100 });
    const config = testConfig({ ...env, PROXY_DATA_DIR: join(dir, 'proxy'), PROXY_HOLD_FENCE_MS: '200' });
    config.dataPlaneToken = cp.deps.config.dataPlaneToken;
    // The proxy reads its cloud credentials from its environment, as in production.
    Object.assign(process.env, env);
    proxy = await startProxy(config, createLogger(process.env.TEST_LOG_LEVEL || 'silent', 'test-proxy'), {
      port: 0,
      host: '127.0.0.1',
      controlPlaneUrl: cp.url,
    });
  });
  after(async () => {
    await proxy?.close();
    await cp?.close();
    await Promise.all([upstream.close(), google.close(), vertex.close(), entra.close(), azure.close()]);
    tls.setDefaultCACertificates(trusted);
    for (const name of ['GOOGLE_APPLICATION_CREDENTIALS', 'AOAI_TENANT', 'AOAI_CLIENT', 'AOAI_SECRET', 'MODELS_FILE']) delete process.env[name];
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends a Messages call to Vertex with a Google token, the model in the path and the version in the body, billed at the sheet', async () => {
    const before = await moneyOf(cp.deps, key);
    upstream.enqueue({ kind: 'ok', inputTokens: 100, outputTokens: 20, cacheReadTokens: 1000, cacheWrite5mTokens: 200 });
    const client = new Anthropic({ baseURL: `${proxy.url}/${key.slug}/anthropic`, apiKey: key.secret, maxRetries: 0 });
    const answer = await client.messages.create({ model: 'tg/sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.usage.cache_read_input_tokens).to.equal(1000);
    const call = vertex.calls.at(-1)!;
    expect(call).to.include({ project: 'test-project', location: 'us-east5', model: 'claude-sonnet-4-5@20250929', method: 'rawPredict' });
    expect(call.body.anthropic_version).to.equal(VERTEX_ANTHROPIC_VERSION);
    expect(call.body).not.to.have.property('model');
    expect(vertex.refusedTokens).to.deep.equal([]);
    await proxy.drain();
    const after = await waitForSpend(cp, key, before.spend);
    // 100 × $3 + 20 × $15 + 1000 × $0.30 (cache read) + 200 × $3.75 (5-minute write), per million.
    expect(after.spend - before.spend).to.be.closeTo(0.00165, 1e-12);
  });

  it("sends Vertex only the betas it takes, in the header, renaming tool search to Vertex's name and naming the rest as dropped", async () => {
    const res = await fetch(`${proxy.url}/${key.slug}/anthropic/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key.secret,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'claude-code-20250219,advanced-tool-use-2025-11-20, files-api-2025-04-14',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'tg/sonnet', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    expect(res.status).to.equal(200);
    expect(vertex.calls.at(-1)!.headers['anthropic-beta']).to.equal('claude-code-20250219,tool-search-tool-2025-10-19');
    expect(res.headers.get('x-tollgate-dropped')).to.equal('anthropic-beta:files-api-2025-04-14');
  });

  it('streams from Vertex through streamRawPredict', async () => {
    const client = new Anthropic({ baseURL: `${proxy.url}/${key.slug}/anthropic`, apiKey: key.secret, maxRetries: 0 });
    const message = await client.messages.stream({ model: 'tg/sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(message.content[0]?.type).to.equal('text');
    expect(vertex.calls.at(-1)).to.include({ method: 'streamRawPredict' });
  });

  it("serves @anthropic-ai/vertex-sdk, unchanged, on the workspace's Vertex route: create, stream and countTokens, billed on the key", async () => {
    const client = new AnthropicVertex({
      baseURL: `${proxy.url}/${key.slug}/vertex/v1`,
      projectId: 'client-project',
      region: 'europe-west1',
      authClient: gatewayKeyAuthClient(key.secret),
      maxRetries: 0,
    });
    const before = await settled(proxy, cp, key);
    const calls = vertex.calls.length;
    upstream.enqueue({ kind: 'ok', inputTokens: 10, outputTokens: 5 }, { kind: 'ok', inputTokens: 10, outputTokens: 5 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const created = await client.messages.create({ model: 'tg/sonnet', max_tokens: 64, messages });
    expect(created.content[0]?.type).to.equal('text');
    const streamed = await client.messages.stream({ model: 'tg/sonnet', max_tokens: 64, messages }).finalMessage();
    expect(streamed.usage.output_tokens).to.equal(5);
    const counted = await client.messages.countTokens({ model: 'tg/sonnet', messages });
    expect(counted.input_tokens).to.be.a('number');
    // The provider's project and location, not the client's, and the provider's model name.
    expect(vertex.calls.slice(calls).map((c) => `${c.project}/${c.location}/${c.model}:${c.method}`)).to.deep.equal([
      'test-project/us-east5/claude-sonnet-4-5@20250929:rawPredict',
      'test-project/us-east5/claude-sonnet-4-5@20250929:streamRawPredict',
      'test-project/us-east5/count-tokens:rawPredict',
    ]);
    // Two calls of 10 in and 5 out at $3 and $15 per million.
    expect((await settled(proxy, cp, key)).spend - before.spend).to.be.closeTo((2 * (10 * 3 + 5 * 15)) / 1e6, 1e-12);
  });

  it('answers 503 in the client format naming the provider and the unset variable, not billed, when its credentials are missing', async () => {
    await settled(proxy, cp, key);
    const before = await moneyOf(cp.deps, key);
    const res = await fetch(`${proxy.url}/${key.slug}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tg/gpt-unset', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(res.status).to.equal(503);
    expect(body.error.type).to.equal('api_error');
    expect(body.error.message).to.equal('Provider "azure-unset" has no usable credentials: AOAI_TENANT_UNSET is not set.');
    expect((await settled(proxy, cp, key)).spend).to.equal(before.spend);
  });

  it('serves an OpenAI SDK client from Azure with Entra tokens that expire mid-run, without a failed call', async function () {
    this.timeout(30_000);
    entra.tokens.lifetimeSeconds = 2;
    const client = new OpenAI({ baseURL: `${proxy.url}/${key.slug}/v1`, apiKey: key.secret, maxRetries: 0 });
    const started = Date.now();
    let calls = 0;
    while (Date.now() - started < 5_000) {
      const answer = await client.chat.completions.create({ model: 'tg/gpt', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.choices[0]?.message.content).to.be.a('string');
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(azure.refusedTokens).to.deep.equal([]);
    expect(entra.tokens.count).to.be.at.least(3);
    expect(calls).to.be.at.least(20);
  });
});

/** The key's spend once the proxy's settlement has reached the control plane. */
async function waitForSpend(cp: TestControlPlane, key: SeededKey, before: number): Promise<{ spend: number }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const money = await moneyOf(cp.deps, key);
    if (money.spend !== before || Date.now() > deadline) return money;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The key's money once every report this proxy took has settled and the spend stopped moving. */
async function settled(proxy: RunningProxy, cp: TestControlPlane, key: SeededKey): Promise<{ spend: number }> {
  await proxy.drain();
  let last = await moneyOf(cp.deps, key);
  for (let quiet = 0; quiet < 5;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = await moneyOf(cp.deps, key);
    quiet = now.spend === last.spend ? quiet + 1 : 0;
    last = now;
  }
  return last;
}
