import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedAnotherKey, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import type { RecordedRequest } from '../../support/fake-upstream/types.js';

type Params = Anthropic.MessageCreateParamsNonStreaming;

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather now in a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
};

/**
 * The official Anthropic client against a provider that speaks only Chat
 * Completions (`tg/gpt-direct`): it cannot tell. Its answers, streams, stream
 * helper, tool loop, token counting and typed errors all work unchanged, and
 * the same usage costs what it costs on a Messages provider.
 */
describeEachStore('@anthropic-ai/sdk on a Chat-Completions-only provider: translated both ways', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let client: Anthropic;
  const clientFor = (key: SeededKey) => new Anthropic({ apiKey: key.secret, baseURL: `${dp.proxy.url}/${key.slug}/anthropic`, maxRetries: 0 });
  const lastChatBody = () => {
    const chat = dp.fake.requests.filter((r: RecordedRequest) => r.path === '/v1/chat/completions');
    return chat.at(-1)!.body as Record<string, unknown>;
  };

  before(async () => {
    dp = await startDataPlane(store, { fake: { formats: 'chat' } });
    k = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct', 'tg/claude-direct'] });
    client = clientFor(k);
  });
  after(() => dp.close());
  beforeEach(() => dp.fake.reset());

  const plain: Params = { model: 'tg/gpt-direct', max_tokens: 50, messages: [{ role: 'user', content: 'Hello, proxy.' }] };

  it('messages.create: a text answer named for the alias, with usage, from a provider that got a Chat Completions call', async () => {
    const message = await client.messages.create(plain);
    expect(message.type).to.equal('message');
    expect(message.model).to.equal('tg/gpt-direct');
    expect(message.id).to.match(/^msg_/);
    expect(message.content).to.deep.equal([{ type: 'text', text: 'tok1 tok2 tok3 tok4 tok5 tok6 tok7 tok8 tok9 tok10 tok11 tok12' }]);
    expect(message.stop_reason).to.equal('end_turn');
    expect(message.usage).to.include({ input_tokens: 4, output_tokens: 12, cache_read_input_tokens: 0 });
    expect(dp.fake.requests).to.have.length(1);
    expect(dp.fake.requests[0]!.credential).to.deep.equal({ header: 'authorization', key: 'sk-upstream-provider-secret' });
    expect(lastChatBody()).to.deep.equal({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Hello, proxy.' }] });
  });

  it('a system prompt, several turns and images (base64 and URL) reach the provider as Chat messages', async () => {
    const message = await client.messages.create({
      ...plain,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe these.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    expect(message.content[0]).to.include({ type: 'text' });
    expect(lastChatBody().messages).to.deep.equal([
      { role: 'system', content: [{ type: 'text', text: 'You are terse.' }] },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe these.' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('messages.stream(): the helper assembles the text and usage from translated events', async () => {
    const stream = client.messages.stream({ ...plain, max_tokens: 5, system: 'Be brief.' });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(texts.join('')).to.equal('tok1 tok2 tok3 tok4 tok5');
    expect(texts.length).to.equal(5);
    expect(final.content).to.deep.equal([{ type: 'text', text: 'tok1 tok2 tok3 tok4 tok5' }]);
    expect(final.stop_reason).to.equal('max_tokens');
    expect(final.model).to.equal('tg/gpt-direct');
    expect(final.usage).to.include({ input_tokens: 6, output_tokens: 5 });
    expect(lastChatBody()).to.include({ stream: true });
    expect(lastChatBody().stream_options).to.deep.equal({ include_usage: true });
  });

  it('a raw stream (stream: true) yields the Messages event sequence in order', async () => {
    const stream = await client.messages.create({ ...plain, max_tokens: 2, stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).to.deep.equal([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('each stop reason: end_turn, max_tokens, stop_sequence, tool_use (streamed and not)', async () => {
    for (const stream of [false, true]) {
      const run = async (p: Params) => (stream ? client.messages.stream(p).finalMessage() : client.messages.create(p));
      expect((await run(plain)).stop_reason, `end_turn stream=${stream}`).to.equal('end_turn');
      expect((await run({ ...plain, max_tokens: 3 })).stop_reason).to.equal('max_tokens');
      const stopped = await run({ ...plain, stop_sequences: [' tok4'] });
      expect(stopped.stop_reason, `stop_sequence stream=${stream}`).to.equal('stop_sequence');
      expect(stopped.stop_sequence).to.equal(' tok4');
      expect(stopped.content).to.deep.equal([{ type: 'text', text: 'tok1 tok2 tok3' }]);
      expect((await run({ ...plain, tools: [weatherTool] })).stop_reason).to.equal('tool_use');
    }
  });

  for (const stream of [false, true]) {
    it(`a whole tool-use round trip${stream ? ' through the stream helper' : ''}: the model calls the tool, the client answers, the model finishes`, async () => {
      const first: Params = { ...plain, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Oslo?' }] };
      const call = stream ? await client.messages.stream(first).finalMessage() : await client.messages.create(first);
      expect(call.stop_reason).to.equal('tool_use');
      const use = call.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(use.name).to.equal('get_weather');
      // Built by the fake from the schema; streamed, the SDK assembled it from input_json_delta fragments.
      expect(use.input).to.deep.equal({ city: 'x', unit: 'celsius' });
      expect(lastChatBody().tools).to.deep.equal([
        { type: 'function', function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.input_schema } },
      ]);

      const second: Params = {
        ...first,
        messages: [
          ...first.messages,
          { role: 'assistant', content: call.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '3°C and clear' }] },
        ],
      };
      const answer = stream ? await client.messages.stream(second).finalMessage() : await client.messages.create(second);
      expect(answer.stop_reason).to.equal('end_turn');
      expect(answer.content[0]).to.include({ type: 'text' });
      const sent = lastChatBody().messages as Record<string, unknown>[];
      expect(sent.at(-2)).to.deep.include({ role: 'assistant' });
      expect((sent.at(-2)!.tool_calls as { id: string }[])[0]!.id).to.equal(use.id);
      expect(sent.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: use.id, content: '3°C and clear' });
    });
  }

  it('countTokens: passed through to a Messages provider, estimated locally for a Chat-Completions-only one', async () => {
    // The Messages provider's own count (the fake counts characters / 4).
    const messagesPlane = await startDataPlane(store, { fake: { formats: 'messages' } });
    try {
      const mk = await seedKey(messagesPlane.cp.deps, { models: ['tg/claude-direct'] });
      const direct = new Anthropic({ apiKey: mk.secret, baseURL: `${messagesPlane.proxy.url}/${mk.slug}/anthropic`, maxRetries: 0 });
      const counted = await direct.messages.countTokens({ model: 'tg/claude-direct', messages: [{ role: 'user', content: 'Hello, proxy.' }] });
      expect(counted.input_tokens).to.equal(4);
      const sent = messagesPlane.fake.requests.at(-1)!;
      expect(sent.path).to.equal('/anthropic/v1/messages/count_tokens');
      expect(sent.body).to.deep.equal({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello, proxy.' }] });
    } finally {
      await messagesPlane.close();
    }
    // The Chat provider has no counting endpoint: o200k_base counts, with OpenAI's chat framing.
    const estimated = await client.messages.countTokens({
      model: 'tg/gpt-direct',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello, proxy.' }],
    });
    expect(estimated.input_tokens).to.equal(3 + (3 + 3) + (3 + 4));
    const withTool = await client.messages.countTokens({
      model: 'tg/gpt-direct',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Hello, proxy.' }],
    });
    expect(withTool.input_tokens).to.be.greaterThan(3 + 3 + 4 + 20);
    expect(dp.fake.requests).to.have.length(0);
  });

  it('countTokens refuses what the call would refuse, and checks the key and the model like a call', async () => {
    const refused = await client.messages
      .countTokens({
        model: 'tg/gpt-direct',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'prefill' },
        ],
      })
      .catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(Anthropic.BadRequestError);
    expect((refused as Error).message).to.include('messages.1');
    const badKey = new Anthropic({ apiKey: 'tgk_wrong', baseURL: `${dp.proxy.url}/${k.slug}/anthropic`, maxRetries: 0 });
    expect(
      await badKey.messages.countTokens({ model: 'tg/gpt-direct', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e),
    ).to.be.instanceOf(Anthropic.AuthenticationError);
    expect(
      await client.messages.countTokens({ model: 'tg/sonnet', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e),
    ).to.be.instanceOf(Anthropic.PermissionDeniedError);
    expect(
      await client.messages.countTokens({ model: 'tg/nope', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e),
    ).to.be.instanceOf(Anthropic.NotFoundError);
    // Only POST, and only on the Messages path.
    const get = await fetch(`${dp.proxy.url}/${k.slug}/anthropic/v1/messages/count_tokens`, { headers: { 'x-api-key': k.secret } });
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    const chatPath = await fetch(`${dp.proxy.url}/${k.slug}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.secret}` },
      body: '{}',
    });
    expect(chatPath.status).to.equal(404);
  });

  it("what has no Chat Completions form is refused before the provider is called, in Anthropic's shape naming the field", async () => {
    const err = await client.messages.create({ ...plain, stop_sequences: ['a', 'b', 'c', 'd', 'e'] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).to.deep.include({ type: 'error' });
    expect((err as Error).message).to.include('stop_sequences: at most 4');
    expect(dp.fake.requests).to.have.length(0);
  });

  const providerErrors: [number, new (...args: never[]) => Error, string][] = [
    [400, Anthropic.BadRequestError, 'invalid_request_error'],
    [401, Anthropic.AuthenticationError, 'authentication_error'],
    [429, Anthropic.RateLimitError, 'rate_limit_error'],
    [500, Anthropic.InternalServerError, 'api_error'],
  ];
  for (const [status, ErrorClass, type] of providerErrors) {
    it(`a provider ${status} arrives as the SDK's ${ErrorClass.name} with the provider's message (streamed and not)`, async () => {
      for (const stream of [false, true]) {
        dp.fake.enqueue({
          kind: 'error',
          status,
          body: { error: { message: `upstream says ${status}`, type: 'whatever', param: null, code: null } },
        });
        const err = await (stream ? client.messages.stream(plain).finalMessage() : client.messages.create(plain)).catch((e: unknown) => e);
        expect(err, `stream=${stream}`).to.be.instanceOf(ErrorClass);
        const apiError = err as InstanceType<typeof Anthropic.APIError>;
        expect(apiError.status).to.equal(status);
        expect(apiError.error).to.deep.equal({ type: 'error', error: { type, message: `upstream says ${status}` } });
      }
    });
  }

  it('a stream the provider breaks off ends in an error the SDK raises', async () => {
    dp.fake.enqueue({ kind: 'reset', afterEvents: 3 });
    const err = await client.messages
      .stream(plain)
      .finalMessage()
      .catch((e: unknown) => e);
    // The error event the proxy writes before it cuts the connection, raised as the SDK's own APIError.
    expect(err).to.be.instanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).to.deep.equal({
      type: 'error',
      error: { type: 'api_error', message: 'The model provider broke off the answer.' },
    });
  });

  it('a client that leaves mid-stream is billed what the provider reports for the whole answer, read on without it', async () => {
    const leaving = await seedAnotherKey(dp.cp.deps, k);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 2000, eventDelayMs: 5 });
    const stream = clientFor(leaving).messages.stream({ ...plain, max_tokens: 4000 });
    let texts = 0;
    await new Promise<void>((resolve) => {
      stream.on('text', () => {
        if (++texts === 3) {
          stream.abort();
          resolve();
        }
      });
    });
    await stream.done().catch(() => undefined);
    await dp.fake.idle();
    // The provider bills the whole generation whether or not the client stays (docs/proxy.md, "A client that leaves").
    expect(dp.fake.requests.at(-1)!.aborted).to.equal(false);
    // The call ends after its client has gone: wait for its settlement.
    let m = await moneyOf(dp.cp.deps, leaving);
    for (const deadline = Date.now() + 10_000; m.entries === 0 && Date.now() < deadline; m = await moneyOf(dp.cp.deps, leaving)) {
      await dp.proxy.drain();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(m.entries).to.equal(1);
    // All 2000 output tokens the provider reported, not the three deltas read nor the 4000 held.
    const perOutputToken = 15 / 1e6;
    expect(m.spend).to.be.at.least(2000 * perOutputToken);
    expect(m.spend).to.be.lessThan(4000 * perOutputToken);
  });

  it('the same usage costs the same translated as passed through to a Messages provider', async () => {
    const messagesPlane = await startDataPlane(store, { fake: { formats: 'messages' } });
    try {
      const direct = await seedKey(messagesPlane.cp.deps, { models: ['tg/claude-direct'] });
      const viaMessages = new Anthropic({ apiKey: direct.secret, baseURL: `${messagesPlane.proxy.url}/${direct.slug}/anthropic`, maxRetries: 0 });
      const translated = await seedAnotherKey(dp.cp.deps, k);
      const viaChat = clientFor(translated);
      const conversation: Omit<Params, 'model'> = {
        max_tokens: 40,
        system: 'You are a weather bot.',
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3°C' }] },
        ],
      };
      const a = await viaMessages.messages.create({ ...conversation, model: 'tg/claude-direct' });
      const b = await viaChat.messages.create({ ...conversation, model: 'tg/gpt-direct' });
      const c = await viaChat.messages.stream({ ...conversation, model: 'tg/gpt-direct' }).finalMessage();
      expect(b.usage.input_tokens).to.equal(a.usage.input_tokens);
      expect(c.usage).to.deep.include({ input_tokens: a.usage.input_tokens, output_tokens: a.usage.output_tokens });
      await messagesPlane.proxy.drain();
      await dp.proxy.drain();
      const spentDirect = (await moneyOf(messagesPlane.cp.deps, direct)).spend;
      const spentTranslated = await moneyOf(dp.cp.deps, translated);
      expect(spentDirect).to.be.greaterThan(0);
      expect(spentTranslated.entries).to.equal(2);
      expect(spentTranslated.spend).to.be.closeTo(2 * spentDirect, 1e-9);
    } finally {
      await messagesPlane.close();
    }
  });
});
