import Anthropic from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { RunningProxy } from '../../../proxy/runtime.js';
import type { TestControlPlane } from '../../support/control-plane.js';
import { moneyOf, seedAnotherKey, type SeededKey } from '../../support/data-plane.js';
import type { FakeUpstream } from '../../support/fake-upstream/index.js';
import type { FakeAzureOpenAi } from '../../support/fake-clouds/azure-openai.js';
import { startCloudPlane, type CloudPlane } from '../../support/fake-clouds/cloud-plane.js';
import type { FakeEntra } from '../../support/fake-clouds/entra.js';
import { VERTEX_ANTHROPIC_VERSION, type FakeVertex } from '../../support/fake-clouds/vertex.js';
import { settled, usageRows } from '../../support/fake-clouds/usage-rows.js';
import { describeEachStore } from '../../support/stores.js';
import { capturedLog } from '../../support/log-lines.js';
import { gatewayKeyAuthClient } from '../../support/vertex-sdk-auth.js';

/**
 * Providers that sign in to their cloud: a Vertex AI provider (Google tokens
 * from a service-account key, Anthropic's models at rawPredict) and an Azure
 * OpenAI provider with Entra ID tokens, each behind a fake that takes only
 * its own identity platform's unexpired tokens; the calls billed at the
 * price sheet.
 */
describeEachStore('proxy: Vertex AI and Azure OpenAI with Entra ID as providers', (store) => {
  let plane: CloudPlane;
  let upstream: FakeUpstream;
  let vertex: FakeVertex;
  let entra: FakeEntra;
  let azure: FakeAzureOpenAi;
  let cp: TestControlPlane;
  let proxy: RunningProxy;
  let key: SeededKey;
  /** The proxy's log, as an operator reads it. */
  const log = capturedLog();

  before(async function () {
    this.timeout(60_000);
    plane = await startCloudPlane(store, {}, log.log);
    ({ upstream, vertex, entra, azure, cp, proxy, key } = plane);
  });
  after(async () => {
    await plane?.close();
  });

  it('sends a Messages call to Vertex with a Google token, the model in the path and the version in the body, billed exactly at the sheet', async () => {
    const fresh = await seedAnotherKey(cp.deps, key);
    upstream.enqueue({ kind: 'ok', inputTokens: 100, outputTokens: 20, cacheReadTokens: 1000, cacheWrite5mTokens: 200 });
    const client = new Anthropic({ baseURL: `${proxy.url}/${fresh.slug}/anthropic`, apiKey: fresh.secret, maxRetries: 0 });
    const answer = await client.messages.create({ model: 'tg/sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.usage.cache_read_input_tokens).to.equal(1000);
    const call = vertex.calls.at(-1)!;
    expect(call).to.include({ project: 'test-project', location: 'us-east5', model: 'claude-sonnet-4-5@20250929', method: 'rawPredict' });
    expect(call.body.anthropic_version).to.equal(VERTEX_ANTHROPIC_VERSION);
    expect(call.body).not.to.have.property('model');
    expect(vertex.refusedTokens).to.deep.equal([]);
    // 100 × $3 + 20 × $15 + 1000 × $0.30 (cache read, a tenth of input) + 200 × $3.75 (5-minute write), per million.
    expect(await usageRows(proxy, cp, fresh)).to.deep.equal([
      { amount: '0.001650000000000', input_tokens: 100, output_tokens: 20, cache_read_tokens: 1000, cache_write_tokens: 200 },
    ]);
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
    const fresh = await seedAnotherKey(cp.deps, key);
    const client = new AnthropicVertex({
      baseURL: `${proxy.url}/${fresh.slug}/vertex/v1`,
      projectId: 'client-project',
      region: 'europe-west1',
      authClient: gatewayKeyAuthClient(fresh.secret),
      maxRetries: 0,
    });
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
    // Two calls of 10 in and 5 out at $3 and $15 per million; the count is not billed.
    const row = { amount: '0.000105000000000', input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0 };
    expect(await usageRows(proxy, cp, fresh)).to.deep.equal([row, row]);
  });

  it("reads a large body on the Vertex route (worked in a body worker) as the call it stands for: the path's model, Vertex's version dropped, the conversation whole", async () => {
    const client = new AnthropicVertex({
      baseURL: `${proxy.url}/${key.slug}/vertex/v1`,
      projectId: 'client-project',
      region: 'europe-west1',
      authClient: gatewayKeyAuthClient(key.secret),
      maxRetries: 0,
    });
    // Past the proxy's offload size (64 KiB): parsed, checked and planned off the event loop.
    const long = 'the quick brown fox jumps over the lazy dog. '.repeat(5_000);
    const answer = await client.messages.create({ model: 'tg/sonnet', max_tokens: 64, messages: [{ role: 'user', content: long }] });
    expect(answer.content[0]?.type).to.equal('text');
    const call = vertex.calls.at(-1)!;
    expect(call).to.include({ model: 'claude-sonnet-4-5@20250929', method: 'rawPredict' });
    expect(call.body).not.to.have.property('model');
    expect(call.body.anthropic_version).to.equal(VERTEX_ANTHROPIC_VERSION);
    expect(call.body.messages).to.deep.equal([{ role: 'user', content: long }]);
  });

  it('answers 503 in the client format naming the provider and the unset variable, not billed, logged once however many calls', async () => {
    await settled(proxy, cp, key);
    const before = await moneyOf(cp.deps, key);
    const from = log.lines.length;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${proxy.url}/${key.slug}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tg/gpt-unset', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect(res.status).to.equal(503);
      expect(body.error.type).to.equal('api_error');
      expect(body.error.message).to.equal('Provider "azure-unset" has no usable credentials: AOAI_TENANT_UNSET is not set.');
    }
    // The token source's one warning for the episode; no line per call beside it.
    const warnings = log.lines.slice(from).filter((l) => Number(l.level) >= 40);
    expect(warnings.map((l) => l.msg)).to.deep.equal(['Provider "azure-unset" has no usable credentials: AOAI_TENANT_UNSET is not set.']);
    expect((await settled(proxy, cp, key)).spend).to.equal(before.spend);
  });

  it('signs in to Entra with the certificate at AZURE_CLIENT_CERTIFICATE_PATH (an assertion Entra verifies against the registered certificate) and calls Azure OpenAI', async () => {
    const fresh = await seedAnotherKey(cp.deps, key);
    const [logins, served] = [entra.certificateLogins, azure.served];
    upstream.enqueue({ kind: 'ok', inputTokens: 10, outputTokens: 5 });
    const client = new OpenAI({ baseURL: `${proxy.url}/${fresh.slug}/v1`, apiKey: fresh.secret, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'tg/gpt-cert', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).to.be.a('string');
    expect(entra.certificateLogins).to.equal(logins + 1);
    expect(azure.served).to.equal(served + 1);
    expect(azure.refusedTokens).to.deep.equal([]);
    expect(await usageRows(proxy, cp, fresh)).to.deep.equal([
      { amount: '0.000105000000000', input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0 },
    ]);
  });

  it("answers 503 naming the provider, never the certificate, when Entra refuses the certificate as not the app's, not billed", async () => {
    await settled(proxy, cp, key);
    const before = await moneyOf(cp.deps, key);
    const refusals = entra.refusals.length;
    const res = await fetch(`${proxy.url}/${key.slug}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tg/gpt-cert-wrong', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    expect(res.status).to.equal(503);
    expect((JSON.parse(text) as { error: { message: string } }).error.message).to.equal(
      'Provider "azure-cert-wrong" has no usable credentials: the token request failed.',
    );
    expect(text).not.to.match(/PRIVATE KEY|CERTIFICATE|entra-app\.pem/);
    expect(entra.refusals.slice(refusals)).to.deep.equal(['invalid_client 700027']);
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
