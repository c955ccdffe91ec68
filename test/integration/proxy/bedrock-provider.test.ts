import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WireFormat } from '../../../proxy/call.js';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { startFakeBedrock, type FakeBedrock } from '../../support/fake-bedrock/index.js';
import { countInputTokens } from '../../support/fake-upstream/index.js';
import { TEST_MODELS_FILE } from '../../support/control-plane.js';
import { seedAnotherKey, seedKey, startDataPlane, startTestProxy, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, errorType, modelBody, sseData } from '../../support/edge-calls.js';
import { describeEachStore } from '../../support/stores.js';
import { isolateAwsEnvironment } from '../../support/aws-environment.js';
import { capturedLog } from '../../support/log-lines.js';

const SONNET_ID = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const HAIKU_ID = 'anthropic.claude-haiku-4-5-20251001-v1:0';

/** tg/sonnet's prices in picodollars per token (3 and 15 USD per million; Messages-format cache defaults). */
const PRICE = { input: 3_000_000n, output: 15_000_000n, read: 300_000n, write5m: 3_750_000n, write1h: 6_000_000n };

/** What a streamed call of each format adds to be told its usage (a Chat client asks for the usage chunk; the others always get it). */
const STREAM_USAGE: Record<WireFormat, Record<string, unknown>> = {
  chat: { stream_options: { include_usage: true } },
  messages: {},
  responses: {},
  gemini: {},
};

function usdText(pico: bigint): string {
  const f = pico * 1000n;
  return `${f / 10n ** 15n}.${String(f % 10n ** 15n).padStart(15, '0')}`;
}

/**
 * Bedrock as a provider: Tollgate's clients in every format reach Claude on
 * the Bedrock fake through InvokeModel, signed with the standard chain's
 * credentials (or sent a Bedrock API key), and the usage Bedrock reports —
 * cache reads and writes included — is billed at the models file's prices.
 */
describeEachStore('proxy: an Amazon Bedrock provider', (store) => {
  const identity = { accessKeyId: 'AKIDTOLLGATE', secretAccessKey: 'tollgate/proxy+secret' };
  let restoreEnvironment: (() => void) | undefined;
  let dp: DataPlane;
  let fake: FakeBedrock;
  let proxy: RunningProxy;
  let base: SeededKey;
  let dir: string;
  /** How far AWS's clock runs ahead of the proxy's. */
  let awsClockAhead = 0;
  /** The proxy's log, as an operator reads it. */
  const log = capturedLog();

  before(async function () {
    this.timeout(30_000);
    restoreEnvironment = isolateAwsEnvironment();
    fake = await startFakeBedrock({
      region: 'us-east-1',
      identities: [identity],
      apiKeys: ['ABSKtollgate'],
      nowMs: () => Date.now() + awsClockAhead,
    });
    dp = await startDataPlane(store);
    base = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/haiku'] });
    dir = mkdtempSync(join(tmpdir(), 'tollgate-bedrock-'));
    const file = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, unknown>; models: Record<string, unknown>[] };
    file.providers.bedrock = { kind: 'bedrock', region: 'us-east-1', endpoint_url: fake.url };
    file.providers['bedrock-key'] = { kind: 'bedrock', region: 'us-east-1', endpoint_url: fake.url, api_key_env: 'TEST_BEDROCK_API_KEY' };
    for (const m of file.models) {
      if (m.alias === 'tg/sonnet') Object.assign(m, { provider: 'bedrock', upstream_model: SONNET_ID });
      if (m.alias === 'tg/haiku') Object.assign(m, { provider: 'bedrock-key', upstream_model: HAIKU_ID });
    }
    writeFileSync(join(dir, 'models.json'), JSON.stringify(file));
    proxy = await startTestProxy(
      dp.cp,
      dp.fake,
      { MODELS_FILE: join(dir, 'models.json'), TEST_BEDROCK_API_KEY: 'ABSKtollgate' },
      { logger: log.log },
    );
  });
  after(async () => {
    await proxy?.close();
    await dp?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
    restoreEnvironment?.();
  });

  /** The key's usage rows: the amount as the ledger's text, then input, output, cache reads, all writes, 1-hour writes. */
  async function ledgerRow(keyId: string): Promise<[string, number, number, number, number, number][]> {
    await proxy.drain();
    const rows = await store.db.query<{ r: [string, number, number, number, number, number] }>(
      `SELECT json_build_array(abs(amount_usd)::text, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens) AS r
         FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
      [keyId],
    );
    return rows.map((x) => x.r);
  }

  it('answers 503 naming the provider and what is missing while there are no AWS credentials, and nothing is billed', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const answer = await edgeCall(proxy.url, 'messages', key.slug, key.secret, modelBody('messages'));
    expect(answer.status, answer.text).to.equal(503);
    expect(errorType('messages', answer)).to.equal('overloaded_error');
    expect(answer.text).to.include('Provider \\"bedrock\\" cannot be called: no AWS credentials were found');
    expect(fake.requests).to.have.length(0);
    expect((await ledgerRow(key.keyId)).filter((r) => r[0] !== '0.000000000000000')).to.deep.equal([]);
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: identity.accessKeyId, AWS_SECRET_ACCESS_KEY: identity.secretAccessKey });
  });

  for (const format of ['messages', 'chat', 'responses'] as WireFormat[]) {
    for (const stream of [false, true]) {
      it(`bills a ${format} client${stream ? ', streamed,' : ''} exactly what Bedrock reports, cache reads and writes included`, async () => {
        const key = await seedAnotherKey(dp.cp.deps, base);
        fake.enqueue({ kind: 'ok', outputTokens: 9, cacheReadTokens: 5_000, cacheWriteTokens: 1_200, cacheWrite1hTokens: 200, tools: 'none' });
        const extra = stream ? { stream, ...STREAM_USAGE[format] } : { stream };
        const answer = await edgeCall(proxy.url, format, key.slug, key.secret, modelBody(format, { ...extra, max_tokens: 100 }));
        expect(answer.status, answer.text).to.equal(200);
        if (stream) expect(sseData(answer.text).length).to.be.above(2);
        expect(answer.text).to.include('tok9');
        const sent = fake.requests.at(-1)!;
        expect(sent).to.deep.include({ operation: stream ? 'invoke-with-response-stream' : 'invoke', modelId: SONNET_ID, caller: 'AKIDTOLLGATE' });
        const body = sent.body as Record<string, unknown>;
        expect(body.anthropic_version).to.equal('bedrock-2023-05-31');
        expect(body).not.to.have.property('model');
        expect(body).not.to.have.property('stream');
        const n = countInputTokens(body);
        const rows = await ledgerRow(key.keyId);
        expect(rows).to.have.length(1);
        const pico = BigInt(n) * PRICE.input + 5_000n * PRICE.read + 1_000n * PRICE.write5m + 200n * PRICE.write1h + 9n * PRICE.output;
        expect(rows[0]).to.deep.equal([usdText(pico), n, 9, 5_000, 1_200, 200]);
      });
    }
  }

  it('moves the betas Bedrock takes into the body and names the ones it would refuse', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const answer = await edgeCall(proxy.url, 'messages', key.slug, key.secret, modelBody('messages'), {
      headers: { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,context-1m-2025-08-07' },
    });
    expect(answer.status, answer.text).to.equal(200);
    expect((fake.requests.at(-1)!.body as Record<string, unknown>).anthropic_beta).to.deep.equal([
      'interleaved-thinking-2025-05-14',
      'context-1m-2025-08-07',
    ]);
    expect(answer.headers.get('x-tollgate-dropped')).to.equal('anthropic-beta:claude-code-20250219');
  });

  it('sends a Bedrock API key as a bearer token for a provider that names one', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const answer = await edgeCall(proxy.url, 'messages', key.slug, key.secret, modelBody('messages', { model: 'tg/haiku' }));
    expect(answer.status, answer.text).to.equal(200);
    expect(fake.requests.at(-1)).to.deep.include({ modelId: HAIKU_ID, caller: 'api-key' });
  });

  it('ends a stream whose event-stream message is malformed as the provider’s break, billing what was metered', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    fake.enqueue({ kind: 'corrupt', afterEvents: 4 });
    const answer = await edgeCall(proxy.url, 'messages', key.slug, key.secret, modelBody('messages', { stream: true })).catch(() => undefined);
    // The client sees a broken stream (fetch's body read fails) or an unfinished one: never a complete answer.
    expect(answer?.text ?? '').not.to.include('message_stop');
    const rows = await ledgerRow(key.keyId);
    expect(rows).to.have.length(1);
    expect(rows[0]![1]).to.be.above(0);
  });

  it('names a signature refused for clock skew as such: 503, the provider named, in the client’s format', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    awsClockAhead = 10 * 60_000;
    try {
      for (const format of ['messages', 'chat'] as WireFormat[]) {
        const answer = await edgeCall(proxy.url, format, key.slug, key.secret, modelBody(format));
        expect(answer.status, answer.text).to.equal(503);
        expect(answer.text).to.include("Bedrock refused the request's signature: this proxy's clock is more than five minutes off AWS's");
        expect(answer.text).to.include('provider \\"bedrock\\"');
      }
    } finally {
      awsClockAhead = 0;
    }
  });

  it('logs Bedrock’s refusals of the provider’s credentials once per episode, not per call, each call answered 503', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const lines = () => log.lines.filter((l) => l.provider === 'bedrock' && /Bedrock refused|accepts the provider/.test(String(l.msg)));
    const denied = {
      kind: 'error' as const,
      status: 403,
      type: 'AccessDeniedException',
      message: 'You don’t have access to the model with the specified model ID.',
    };
    const statuses: number[] = [];
    const call = async () => statuses.push((await edgeCall(proxy.url, 'messages', key.slug, key.secret, modelBody('messages'))).status);
    // An accepted call first: an episode an earlier test started is over before this one counts.
    await call();
    const from = lines().length;
    awsClockAhead = 10 * 60_000;
    try {
      for (let i = 0; i < 3; i++) await call();
    } finally {
      awsClockAhead = 0;
    }
    await call();
    fake.enqueue(denied, denied, denied);
    for (let i = 0; i < 3; i++) await call();
    expect(statuses).to.deep.equal([200, 503, 503, 503, 200, 503, 503, 503]);
    // Two episodes of three refused calls: a warning as each starts, a line when the accepted call ends the first.
    expect(
      lines()
        .slice(from)
        .map((l) => [l.level, String(l.msg).split(' (')[0]]),
    ).to.deep.equal([
      [40, "Bedrock refused the request's signature: this proxy's clock is more than five minutes off AWS's"],
      [30, 'the cloud accepts the provider’s credentials again'],
      [40, "Bedrock refused the provider's access to the model"],
    ]);
    expect(log.text()).not.to.include(identity.secretAccessKey);
  });

  it('answers Bedrock’s own refusals in the client’s format: a ThrottlingException is a 429 rate-limit error', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    for (const format of ['messages', 'chat'] as WireFormat[]) {
      fake.enqueue({ kind: 'error', status: 429, type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' });
      const answer = await edgeCall(proxy.url, format, key.slug, key.secret, modelBody(format));
      expect(answer.status, answer.text).to.equal(429);
      expect(errorType(format, answer)).to.equal('rate_limit_error');
      expect(answer.text).to.include('Too many requests, please wait');
    }
  });
});
