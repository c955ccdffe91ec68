import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

/**
 * The official clients with only the base URL changed: the same
 * key on both, streamed and not, and their typed errors for our refusals.
 */
describeEachStore('SDKs through the proxy: openai and @anthropic-ai/sdk with only the base URL changed', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let openai: OpenAI;
  let anthropic: Anthropic;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/haiku'] });
    openai = new OpenAI({ apiKey: k.secret, baseURL: `${dp.proxy.url}/${k.slug}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: k.secret, baseURL: `${dp.proxy.url}/${k.slug}/anthropic`, maxRetries: 0 });
  });
  after(() => dp.close());

  it('openai: chat.completions.create answers with content and usage', async () => {
    const completion = await openai.chat.completions.create({ model: 'tg/sonnet', messages: [{ role: 'user', content: 'Hello, proxy.' }] });
    expect(completion.choices[0]!.message.content).to.match(/^tok1 tok2/);
    expect(completion.usage?.completion_tokens).to.equal(12);
  });

  it('openai: a streamed call yields the text chunk by chunk and no usage chunk it did not ask for', async () => {
    const stream = await openai.chat.completions.create({
      model: 'tg/sonnet',
      messages: [{ role: 'user', content: 'Stream, please.' }],
      stream: true,
      max_tokens: 6,
    });
    let text = '';
    let usageChunks = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usageChunks++;
    }
    expect(text).to.equal('tok1 tok2 tok3 tok4 tok5 tok6');
    expect(usageChunks).to.equal(0);
  });

  it('openai: models.list shows the aliases this key may call', async () => {
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).to.deep.equal(['tg/haiku', 'tg/sonnet']);
  });

  it('anthropic: messages.create answers with a content array', async () => {
    const message = await anthropic.messages.create({ model: 'tg/sonnet', max_tokens: 50, messages: [{ role: 'user', content: 'Hello, proxy.' }] });
    expect(message.content[0]).to.include({ type: 'text' });
    expect(message.usage.output_tokens).to.equal(12);
  });

  it('anthropic: messages.stream().finalMessage() gives the full text and usage', async () => {
    const stream = anthropic.messages.stream({ model: 'tg/haiku', max_tokens: 4, messages: [{ role: 'user', content: 'Stream, please.' }] });
    const final = await stream.finalMessage();
    expect(final.content).to.deep.equal([{ type: 'text', text: 'tok1 tok2 tok3 tok4' }]);
    expect(final.usage.output_tokens).to.equal(4);
  });

  it('anthropic: models.list shows the same aliases', async () => {
    const ids: string[] = [];
    for await (const m of anthropic.models.list()) ids.push(m.id);
    expect(ids).to.deep.equal(['tg/haiku', 'tg/sonnet']);
  });

  it("both clients raise their own typed errors for the proxy's refusals", async () => {
    const notAllowed = await openai.chat.completions
      .create({ model: 'tg/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(notAllowed).to.be.instanceOf(OpenAI.PermissionDeniedError);
    const unknown = await anthropic.messages
      .create({ model: 'tg/nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(Anthropic.NotFoundError);
    const badKey = new OpenAI({ apiKey: 'tgk_wrong', baseURL: `${dp.proxy.url}/${k.slug}/v1`, maxRetries: 0 });
    expect(await badKey.models.list().catch((e: unknown) => e)).to.be.instanceOf(OpenAI.AuthenticationError);
  });

  it('every call above was billed to the one key, once each', async () => {
    await dp.proxy.drain();
    const m = await moneyOf(dp.cp.deps, k);
    expect(m.entries).to.equal(4);
    expect(m.spend).to.be.greaterThan(0);
  });
});
