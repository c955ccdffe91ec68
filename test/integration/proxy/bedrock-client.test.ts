import { expect } from 'chai';
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { describeEachStore } from '../../support/stores.js';

/**
 * Claude Code's Bedrock mode as a client format: the Anthropic Bedrock SDK
 * (the client inside Claude Code), unchanged, with Tollgate's key as its
 * Bedrock API key (`Authorization: Bearer`) and its base URL
 * `/{ws}/bedrock`, calls InvokeModel and InvokeModelWithResponseStream on an
 * alias served by a plain Anthropic provider: answered as Bedrock answers
 * (the stream in the binary event stream) and billed on the key.
 */
describeEachStore('proxy: Bedrock InvokeModel as a client format', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let client: AnthropicBedrock;

  before(async () => {
    dp = await startDataPlane(store, { fake: { defaultBehavior: { kind: 'ok', tools: 'none' } } });
    k = await seedKey(dp.cp.deps, { models: ['tg/sonnet'] });
    client = new AnthropicBedrock({ baseURL: `${dp.proxy.url}/${k.slug}/bedrock`, apiKey: k.secret, awsRegion: 'us-east-1', maxRetries: 0 });
  });
  after(() => dp?.close());

  it('answers InvokeModel with the Messages answer, the alias taken from the path, betas from the body', async () => {
    dp.fake.reset();
    const message = await client.messages.create(
      { model: 'tg/sonnet', max_tokens: 50, messages: [{ role: 'user', content: 'hello over bedrock' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    );
    expect(message.content[0]).to.deep.include({ type: 'text', text: 'tok1 tok2 tok3 tok4 tok5 tok6 tok7 tok8 tok9 tok10 tok11 tok12' });
    const sent = dp.fake.requests.at(-1)!;
    expect(sent.path).to.equal('/anthropic/v1/messages');
    expect(sent.body).to.deep.include({ model: 'claude-sonnet-4-5', stream: false });
    expect(sent.body).not.to.have.property('anthropic_version');
    expect(sent.headers['anthropic-beta']).to.equal('context-1m-2025-08-07');
  });

  it('streams InvokeModelWithResponseStream in the binary event stream, which the SDK reads event for event, and bills the key', async () => {
    await dp.proxy.drain();
    const before = await moneyOf(dp.cp.deps, k);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 7, cacheReadTokens: 30, tools: 'none' });
    const stream = client.messages.stream({ model: 'tg/sonnet', max_tokens: 50, messages: [{ role: 'user', content: 'stream please' }] });
    const final = await stream.finalMessage();
    expect(final.usage).to.deep.include({ output_tokens: 7, cache_read_input_tokens: 30 });
    expect(final.content[0]).to.deep.include({ text: 'tok1 tok2 tok3 tok4 tok5 tok6 tok7' });
    await dp.proxy.drain();
    const after = await moneyOf(dp.cp.deps, k);
    expect(after.entries).to.equal(before.entries + 1);
    expect(after.spend).to.be.above(before.spend);
  });

  it('refuses a call without a Tollgate key the way the Messages format does', async () => {
    const anonymous = new AnthropicBedrock({ baseURL: `${dp.proxy.url}/${k.slug}/bedrock`, skipAuth: true, awsRegion: 'us-east-1', maxRetries: 0 });
    const err = (await anonymous.messages
      .create({ model: 'tg/sonnet', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as { status: number };
    expect(err.status).to.equal(401);
  });
});
