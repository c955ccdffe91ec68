import { BedrockRuntimeClient, InvokeModelCommand, InvokeModelWithResponseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { isolateAwsEnvironment } from '../../support/aws-environment.js';
import { TEST_MODELS_FILE } from '../../support/control-plane.js';
import { startFakeBedrock, type FakeBedrock } from '../../support/fake-bedrock/index.js';
import { seedAnotherKey, seedKey, startDataPlane, startTestProxy, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { describeEachStore } from '../../support/stores.js';

const SONNET_ID = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const REQUEST = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'hello from the AWS SDK' }] };

/**
 * The AWS SDK's Bedrock runtime client, unchanged — its default request
 * handler, which speaks HTTP/2 only (h2c to an `http://` endpoint) — with
 * Tollgate's Bedrock route as its endpoint and a Tollgate key as its Bedrock
 * API key (`Authorization: Bearer`, the SDK's `token`): InvokeModel and
 * InvokeModelWithResponseStream on an alias served by a Bedrock provider and
 * on one served by a plain Anthropic provider, answered as Bedrock answers
 * and billed on the key.
 */
describeEachStore('proxy: the AWS SDK’s Bedrock runtime client, unchanged', (store) => {
  const identity = { accessKeyId: 'AKIDTOLLGATE', secretAccessKey: 'tollgate/proxy+secret' };
  let restoreEnvironment: (() => void) | undefined;
  let dp: DataPlane;
  let bedrock: FakeBedrock;
  let proxy: RunningProxy;
  let base: SeededKey;
  let dir: string;

  before(async function () {
    this.timeout(30_000);
    restoreEnvironment = isolateAwsEnvironment();
    // The proxy's own AWS credentials, for its Bedrock provider; the SDK below never signs with them.
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: identity.accessKeyId, AWS_SECRET_ACCESS_KEY: identity.secretAccessKey });
    bedrock = await startFakeBedrock({ region: 'us-east-1', identities: [identity] });
    dp = await startDataPlane(store);
    base = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/claude-direct'] });
    dir = mkdtempSync(join(tmpdir(), 'tollgate-aws-sdk-'));
    const file = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, unknown>; models: Record<string, unknown>[] };
    file.providers.bedrock = { kind: 'bedrock', region: 'us-east-1', endpoint_url: bedrock.url };
    for (const m of file.models) if (m.alias === 'tg/sonnet') Object.assign(m, { provider: 'bedrock', upstream_model: SONNET_ID });
    writeFileSync(join(dir, 'models.json'), JSON.stringify(file));
    proxy = await startTestProxy(dp.cp, dp.fake, { MODELS_FILE: join(dir, 'models.json') });
  });
  after(async () => {
    await proxy?.close();
    await dp?.close();
    await bedrock?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    restoreEnvironment?.();
  });

  function sdkClient(key: SeededKey, url = proxy.url): BedrockRuntimeClient {
    return new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: `${url}/${key.slug}/bedrock`,
      token: { token: key.secret },
      authSchemePreference: ['httpBearerAuth'],
      maxAttempts: 1,
    });
  }

  /** The key's usage rows: input, output and cache-read tokens, and whether money moved. */
  async function usage(key: SeededKey): Promise<{ output: number; read: number; billed: boolean }[]> {
    await proxy.drain();
    const rows = await store.db.query<{ output: number; read: number; billed: boolean }>(
      `SELECT output_tokens AS output, cache_read_tokens AS read, amount_usd <> 0 AS billed
         FROM ledger_entries WHERE key_id = $1 AND kind = 'usage' ORDER BY created_at`,
      [key.keyId],
    );
    return rows;
  }

  const PROVIDERS = [
    { alias: 'tg/sonnet', name: 'a Bedrock provider' },
    { alias: 'tg/claude-direct', name: 'a plain Anthropic provider' },
  ];

  for (const { alias, name } of PROVIDERS) {
    /** The answer the provider behind `alias` gives next. */
    const enqueue = (outputTokens: number, cacheReadTokens: number) =>
      alias === 'tg/sonnet'
        ? bedrock.enqueue({ kind: 'ok', outputTokens, cacheReadTokens, tools: 'none' })
        : dp.fake.enqueue({ kind: 'ok', outputTokens, cacheReadTokens, tools: 'none' });

    it(`InvokeModel on ${name}: the Messages answer as Bedrock gives it, billed on the key`, async () => {
      const key = await seedAnotherKey(dp.cp.deps, base);
      enqueue(6, 40);
      const client = sdkClient(key);
      try {
        const answer = await client.send(
          new InvokeModelCommand({ modelId: alias, contentType: 'application/json', accept: 'application/json', body: JSON.stringify(REQUEST) }),
        );
        const message = JSON.parse(Buffer.from(answer.body).toString('utf8')) as { content: { text: string }[]; usage: Record<string, number> };
        expect(message.content[0]!.text).to.equal('tok1 tok2 tok3 tok4 tok5 tok6');
        expect(message.usage).to.deep.include({ output_tokens: 6, cache_read_input_tokens: 40 });
      } finally {
        client.destroy();
      }
      expect(await usage(key)).to.deep.equal([{ output: 6, read: 40, billed: true }]);
    });

    it(`InvokeModelWithResponseStream on ${name}: the events the SDK reads one by one, billed on the key`, async () => {
      const key = await seedAnotherKey(dp.cp.deps, base);
      enqueue(7, 30);
      const client = sdkClient(key);
      const events: { type: string; delta?: { text?: string }; usage?: Record<string, number> }[] = [];
      try {
        const answer = await client.send(
          new InvokeModelWithResponseStreamCommand({ modelId: alias, contentType: 'application/json', body: JSON.stringify(REQUEST) }),
        );
        for await (const part of answer.body!) {
          if (part.chunk?.bytes) events.push(JSON.parse(Buffer.from(part.chunk.bytes).toString('utf8')) as (typeof events)[number]);
        }
      } finally {
        client.destroy();
      }
      expect(events[0]!.type).to.equal('message_start');
      expect(events.at(-1)!.type).to.equal('message_stop');
      const text = events.map((e) => (e.type === 'content_block_delta' ? (e.delta?.text ?? '') : '')).join('');
      expect(text).to.equal('tok1 tok2 tok3 tok4 tok5 tok6 tok7');
      expect(events.find((e) => e.type === 'message_delta')!.usage).to.deep.include({ output_tokens: 7 });
      expect(await usage(key)).to.deep.equal([{ output: 7, read: 30, billed: true }]);
    });
  }

  it('is set up by the environment alone (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_BEARER_TOKEN_BEDROCK, AWS_REGION), its code untouched', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 4, tools: 'none' });
    const names = ['AWS_ENDPOINT_URL_BEDROCK_RUNTIME', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_REGION'] as const;
    const saved = names.map((n) => process.env[n]);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: `${proxy.url}/${key.slug}/bedrock`,
      AWS_BEARER_TOKEN_BEDROCK: key.secret,
      AWS_REGION: 'us-east-1',
    });
    const client = new BedrockRuntimeClient();
    try {
      const answer = await client.send(
        new InvokeModelCommand({ modelId: 'tg/claude-direct', contentType: 'application/json', body: JSON.stringify(REQUEST) }),
      );
      expect(JSON.parse(Buffer.from(answer.body).toString('utf8'))).to.have.nested.property('usage.output_tokens', 4);
    } finally {
      client.destroy();
      for (const [i, n] of names.entries()) {
        if (saved[i] === undefined) delete process.env[n];
        else process.env[n] = saved[i];
      }
    }
    expect(await usage(key)).to.deep.equal([{ output: 4, read: 0, billed: true }]);
  });

  it('refuses what is not a Tollgate key — an unknown one, or IAM credentials the SDK signs with — with a 401 the SDK raises', async () => {
    const unknown = sdkClient({ ...base, secret: 'tg_not_a_key' });
    const signing = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: `${proxy.url}/${base.slug}/bedrock`,
      credentials: identity,
      maxAttempts: 1,
    });
    try {
      for (const client of [unknown, signing]) {
        const err = (await client
          .send(new InvokeModelCommand({ modelId: 'tg/sonnet', contentType: 'application/json', body: JSON.stringify(REQUEST) }))
          .catch((e: unknown) => e)) as { $metadata?: { httpStatusCode?: number } };
        expect(err.$metadata?.httpStatusCode).to.equal(401);
      }
    } finally {
      unknown.destroy();
      signing.destroy();
    }
  });

  it('cannot call a proxy with PROXY_HTTP2_CLEARTEXT=false: the client speaks HTTP/2 only', async () => {
    const h1Only = await startTestProxy(dp.cp, dp.fake, { PROXY_HTTP2_CLEARTEXT: 'false', MODELS_FILE: join(dir, 'models.json') });
    const client = sdkClient(base, h1Only.url);
    try {
      const outcome = await client
        .send(new InvokeModelCommand({ modelId: 'tg/claude-direct', contentType: 'application/json', body: JSON.stringify(REQUEST) }))
        .then(
          () => 'answered',
          () => 'failed',
        );
      expect(outcome).to.equal('failed');
    } finally {
      client.destroy();
      await h1Only.close();
    }
  });
});
