import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

/**
 * What the SDKs call beside chat: one model (`models.retrieve`, the OpenAI
 * SDK escaping the alias's `/`), embeddings billed on the key, the base
 * probe, and the AI SDK's Anthropic provider on its documented base URL.
 */
describeEachStore('SDKs: models.retrieve, embeddings.create, HEAD probes and the AI SDK anthropic base URL', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let clients: { openai: OpenAI; anthropic: Anthropic };
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/gpt-direct', 'tg/claude-direct'] });
    const base = `${dp.proxy.url}/${k.slug}`;
    clients = {
      openai: new OpenAI({ apiKey: k.secret, baseURL: `${base}/v1`, maxRetries: 0 }),
      anthropic: new Anthropic({ apiKey: k.secret, baseURL: `${base}/anthropic`, maxRetries: 0 }),
    };
  });
  after(() => dp.close());

  it('openai: models.retrieve gives the OpenAI model object of an alias (sent as tg%2Fsonnet)', async () => {
    const m = await clients.openai.models.retrieve('tg/sonnet');
    expect(m).to.deep.equal({ id: 'tg/sonnet', object: 'model', created: 0, owned_by: 'primary', max_output_tokens: 64000 });
  });

  it('anthropic: models.retrieve gives the Anthropic model object', async () => {
    const m = await clients.anthropic.models.retrieve('tg/gpt-direct');
    expect(m).to.deep.include({ type: 'model', id: 'tg/gpt-direct', display_name: 'tg/gpt-direct' });
  });

  it('the alias unescaped in the path works too', async () => {
    const res = await fetch(`${dp.proxy.url}/${k.slug}/anthropic/v1/models/tg/sonnet`, { headers: { 'x-api-key': k.secret } });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { id: string }).id).to.equal('tg/sonnet');
  });

  it('an alias the key may not call, or none at all, is a 404 in each format', async () => {
    const err = await clients.openai.models.retrieve('tg/haiku').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('model_not_found');
    const gone = await clients.anthropic.models.retrieve('tg/nope').catch((e: unknown) => e);
    expect(gone).to.be.instanceOf(Anthropic.NotFoundError);
    expect((gone as InstanceType<typeof Anthropic.NotFoundError>).error).to.deep.include({ type: 'error' });
  });

  it('a retrieve without a valid key is a 401', async () => {
    const res = await fetch(`${dp.proxy.url}/${k.slug}/v1/models/tg%2Fsonnet`, { headers: { authorization: 'Bearer tg-not-a-key' } });
    expect(res.status).to.equal(401);
  });

  it('HEAD on each format base answers 200 without a key', async () => {
    for (const base of ['anthropic', 'anthropic/v1', 'v1', 'v1/']) {
      const res = await fetch(`${dp.proxy.url}/${k.slug}/${base}`, { method: 'HEAD' });
      expect(res.status, base).to.equal(200);
    }
    const other = await fetch(`${dp.proxy.url}/${k.slug}/anthropic`, { method: 'GET' });
    expect(other.status).to.equal(404);
  });

  it('openai: embeddings.create answers from the provider and bills its prompt tokens at the input price', async () => {
    const own = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct'] });
    const client = new OpenAI({ apiKey: own.secret, baseURL: `${dp.proxy.url}/${own.slug}/v1`, maxRetries: 0 });
    const answer = await client.embeddings.create({ model: 'tg/gpt-direct', input: ['one two three', 'four five'] });
    expect(answer.data).to.have.length(2);
    expect(answer.data[0]!.embedding).to.have.length(4);
    expect(answer.usage.prompt_tokens).to.equal(5);
    const sent = dp.fake.requests.filter((r) => r.path === '/v1/embeddings').at(-1)!;
    expect(sent.body).to.deep.include({ input: ['one two three', 'four five'] });
    expect((sent.body as { model: string }).model).to.not.equal('tg/gpt-direct');
    await dp.proxy.drain();
    const money = await moneyOf(dp.cp.deps, own);
    expect(money.spend).to.be.closeTo((5 * 3) / 1e6, 1e-12);
    expect(money.entries).to.equal(1);
    const [row] = await dp.cp.deps.db.query<{ format: string; input_tokens: number; output_tokens: number }>(
      `SELECT format, input_tokens, output_tokens FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
      [own.keyId],
    );
    expect(row).to.deep.equal({ format: 'embeddings', input_tokens: 5, output_tokens: 0 });
  });

  it('embeddings on a Messages-only provider is a 400 naming why', async () => {
    const err = await clients.openai.embeddings.create({ model: 'tg/claude-direct', input: 'hi' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).to.match(/speaks only the Messages format/);
  });

  it('embeddings without input, or of an alias the key may not call, are refused in the OpenAI shape', async () => {
    const res = await fetch(`${dp.proxy.url}/${k.slug}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tg/gpt-direct' }),
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.match(/^input:/);
    const forbidden = await clients.openai.embeddings.create({ model: 'tg/haiku', input: 'hi' }).catch((e: unknown) => e);
    expect(forbidden).to.be.instanceOf(OpenAI.PermissionDeniedError);
  });

  it("count_tokens has its own per-key window at the key's RPM: the third count in a minute is a 429, calls are not used up", async () => {
    const own = await seedKey(dp.cp.deps, { models: ['tg/sonnet'], rpm: 2 });
    const client = new Anthropic({ apiKey: own.secret, baseURL: `${dp.proxy.url}/${own.slug}/anthropic`, maxRetries: 0 });
    const params = { model: 'tg/sonnet', messages: [{ role: 'user' as const, content: 'Count me.' }] };
    await client.messages.countTokens(params);
    await client.messages.countTokens(params);
    const err = await client.messages.countTokens(params).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).to.match(/^\d+$/);
    const message = await client.messages.create({ ...params, max_tokens: 5 });
    expect(message.type).to.equal('message');
  });

  it("embeddings take the key's RPM like a call: over it, a 429 in the OpenAI shape", async () => {
    const own = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct'], rpm: 1 });
    const client = new OpenAI({ apiKey: own.secret, baseURL: `${dp.proxy.url}/${own.slug}/v1`, maxRetries: 0 });
    await client.embeddings.create({ model: 'tg/gpt-direct', input: 'one' });
    const err = await client.embeddings.create({ model: 'tg/gpt-direct', input: 'two' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.RateLimitError);
  });

  it('AI SDK: @ai-sdk/anthropic on …/{ws}/anthropic/v1 generates text', async () => {
    const provider = createAnthropic({ baseURL: `${dp.proxy.url}/${k.slug}/anthropic/v1`, apiKey: k.secret });
    const { text } = await generateText({ model: provider('tg/gpt-direct'), prompt: 'Hello, proxy.', maxOutputTokens: 50, maxRetries: 0 });
    expect(text).to.match(/^tok1 tok2/);
  });
});
