import OpenAI from 'openai';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { countInputTokens } from '../../support/fake-upstream/index.js';
import { moneyOf, seedKey, startDataPlane, UPSTREAM_SECRET, type DataPlane, type SeededKey } from '../../support/data-plane.js';

type Json = Record<string, unknown>;

const MODEL = 'tg/claude-direct';
const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city'] },
  },
};
const clock = { ...weather, function: { ...weather.function, name: 'get_time', description: 'Time in a city' } };

function words(n: number): string {
  return Array.from({ length: n }, (_, i) => `tok${i + 1}`).join(' ');
}

/**
 * The official openai client, unchanged, calling an alias whose provider
 * speaks only Messages: every request is translated to Messages on the way
 * out and every answer, stream and error back into Chat Completions.
 */
describeEachStore('translation: the openai client on a provider that speaks only Messages', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let client: OpenAI;
  /** The Messages request the provider received for the last call. */
  const upstream = (): Json => dp.fake.requests.at(-1)!.body as Json;

  before(async () => {
    dp = await startDataPlane(store, { fake: { formats: 'messages' } });
    k = await seedKey(dp.cp.deps, { models: [MODEL] });
    client = new OpenAI({ apiKey: k.secret, baseURL: `${dp.proxy.url}/${k.slug}/v1`, maxRetries: 0 });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  describe('text', () => {
    it('a plain call answers with content, stop, usage and the alias; the provider got a Messages request with the model ceiling', async () => {
      const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hello there.' }] });
      expect(completion.object).to.equal('chat.completion');
      expect(completion.model).to.equal(MODEL);
      expect(completion.id).to.match(/^msg_/);
      expect(completion.choices).to.have.length(1);
      expect(completion.choices[0]!.message).to.include({ role: 'assistant', content: words(12) });
      expect(completion.choices[0]!.finish_reason).to.equal('stop');
      expect(completion.usage).to.deep.include({ prompt_tokens: 3, completion_tokens: 12, total_tokens: 15 });
      expect(completion.usage?.prompt_tokens_details?.cached_tokens).to.equal(0);

      const [req] = dp.fake.requests;
      expect(req!.path).to.equal('/anthropic/v1/messages');
      expect(req!.credential).to.deep.equal({ header: 'x-api-key', key: UPSTREAM_SECRET });
      expect(req!.headers['anthropic-version']).to.equal('2023-06-01');
      expect(req!.body).to.deep.equal({ model: 'claude-sonnet-4-5', max_tokens: 64000, messages: [{ role: 'user', content: 'Hello there.' }] });
    });

    it('system and developer messages become the system prompt; sampling, stop and user carry over', async () => {
      await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'Be terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
          { role: 'user', content: 'Hi' },
        ],
        temperature: 0.5,
        top_p: 0.9,
        stop: 'END',
        user: 'user-42',
        max_completion_tokens: 40,
      });
      expect(upstream()).to.deep.equal({
        model: 'claude-sonnet-4-5',
        max_tokens: 40,
        system: [
          { type: 'text', text: 'Be terse.' },
          { type: 'text', text: 'Answer in English.' },
        ],
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: 0.5,
        top_p: 0.9,
        stop_sequences: ['END'],
        metadata: { user_id: 'user-42' },
      });
    });

    it('a multi-turn conversation keeps its turns in order and is billed on its whole text', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'Count.' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ];
      const completion = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 5 });
      expect((upstream().messages as Json[]).map((m) => [m.role, m.content])).to.deep.equal([
        ['user', 'one'],
        ['assistant', 'two'],
        ['user', 'three'],
      ]);
      expect(upstream().system).to.equal('Count.');
      expect(completion.usage?.prompt_tokens).to.equal(countInputTokens(upstream()));
      expect(completion.usage?.prompt_tokens).to.equal(Math.ceil('Count.onetwothree'.length / 4));
    });

    it('image parts (an https URL and a base64 data URL) become image source blocks', async () => {
      await client.chat.completions.create({
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'low' } },
            ],
          },
        ],
      });
      expect((upstream().messages as Json[])[0]!.content).to.deep.equal([
        { type: 'text', text: 'What is in these?' },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
      ]);
    });

    it('a streamed call yields role, text deltas and finish_reason, then ends; no usage chunk unless asked', async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Stream.' }],
        stream: true,
        max_tokens: 6,
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks[0]!.choices[0]!.delta.role).to.equal('assistant');
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).to.equal(words(6));
      expect(chunks.at(-1)!.choices[0]!.finish_reason).to.equal('length');
      expect(chunks.every((c) => c.model === MODEL && c.object === 'chat.completion.chunk' && !c.usage)).to.equal(true);
      expect(upstream().stream).to.equal(true);
    });

    it('stream_options.include_usage adds the usage chunk (empty choices) before the end', async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Stream.' }],
        stream: true,
        max_tokens: 3,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const last = chunks.at(-1)!;
      expect(last.choices).to.deep.equal([]);
      expect(last.usage).to.deep.include({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    });

    it('the stream helper assembles the final completion', async () => {
      const final = await client.chat.completions
        .stream({ model: MODEL, messages: [{ role: 'user', content: 'Stream.' }], max_tokens: 4 })
        .finalChatCompletion();
      expect(final.choices[0]!.message.content).to.equal(words(4));
      expect(final.choices[0]!.finish_reason).to.equal('length');
    });
  });

  describe('finish reasons', () => {
    for (const stream of [false, true]) {
      const how = stream ? 'streamed' : 'non-streamed';
      it(`${how}: max_tokens → length, stop sequence → stop, tool use → tool_calls, end of turn → stop`, async () => {
        const finish = async (body: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'model' | 'stream'>) => {
          const final = stream
            ? await client.chat.completions.stream({ ...body, model: MODEL }).finalChatCompletion()
            : await client.chat.completions.create({ ...body, model: MODEL });
          return { reason: final.choices[0]!.finish_reason, content: final.choices[0]!.message.content };
        };
        const user: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }];
        expect(await finish({ messages: user, max_tokens: 2 })).to.deep.equal({ reason: 'length', content: words(2) });
        expect(await finish({ messages: user, stop: [' tok4'] })).to.deep.equal({ reason: 'stop', content: words(3) });
        expect((await finish({ messages: user, tools: [weather] })).reason).to.equal('tool_calls');
        expect(await finish({ messages: user })).to.deep.equal({ reason: 'stop', content: words(12) });
      });
    }
  });

  describe('tools', () => {
    it('a full round trip: the model calls the tool, the client sends the result, the model answers', async () => {
      const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris?' };
      const first = await client.chat.completions.create({ model: MODEL, messages: [question], tools: [weather], tool_choice: 'required' });
      expect(first.choices[0]!.finish_reason).to.equal('tool_calls');
      const message = first.choices[0]!.message;
      expect(message.content).to.equal(null);
      expect(message.tool_calls).to.have.length(1);
      const call = message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.id).to.match(/^toolu_/);
      expect(call.function.name).to.equal('get_weather');
      expect(JSON.parse(call.function.arguments)).to.deep.equal({ city: 'x', unit: 'c' });
      expect(upstream().tools).to.deep.equal([{ name: 'get_weather', description: 'Weather for a city', input_schema: weather.function.parameters }]);
      expect(upstream().tool_choice).to.deep.equal({ type: 'any' });

      const second = await client.chat.completions.create({
        model: MODEL,
        tools: [weather],
        messages: [question, message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 C' }],
      });
      expect(second.choices[0]!.finish_reason).to.equal('stop');
      expect(second.choices[0]!.message.content).to.equal(words(12));
      expect((upstream().messages as Json[]).slice(1)).to.deep.equal([
        { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'x', unit: 'c' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21 C' }] },
      ]);
    });

    it('parallel tool calls come back with their indexes, and their results go up as one user turn', async () => {
      const stream = client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Both?' }], tools: [weather, clock] });
      const final = await stream.finalChatCompletion();
      const calls = final.choices[0]!.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
      expect(calls.map((c) => c.function.name)).to.deep.equal(['get_weather', 'get_time']);
      expect(calls.map((c) => JSON.parse(c.function.arguments) as unknown)).to.deep.equal([
        { city: 'x', unit: 'c' },
        { city: 'x', unit: 'c' },
      ]);
      await client.chat.completions.create({
        model: MODEL,
        tools: [weather, clock],
        messages: [
          { role: 'user', content: 'Both?' },
          final.choices[0]!.message as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: calls[0]!.id, content: 'Sunny' },
          { role: 'tool', tool_call_id: calls[1]!.id, content: [{ type: 'text', text: '10:00' }] },
        ],
      });
      const turns = upstream().messages as Json[];
      expect(turns).to.have.length(3);
      expect(turns[2]).to.deep.equal({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: calls[0]!.id, content: 'Sunny' },
          { type: 'tool_result', tool_use_id: calls[1]!.id, content: [{ type: 'text', text: '10:00' }] },
        ],
      });
    });

    it('parallel_tool_calls: false and a named tool_choice reach the provider as tool_choice', async () => {
      await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        tools: [weather, clock],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
        parallel_tool_calls: false,
      });
      expect(upstream().tool_choice).to.deep.equal({ type: 'tool', name: 'get_time', disable_parallel_tool_use: true });
    });

    it('runTools (streamed) runs the whole loop: the SDK assembles the arguments, calls the function, sends the result', async () => {
      const seen: unknown[] = [];
      const runner = client.chat.completions.runTools({
        model: MODEL,
        stream: true,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              parameters: weather.function.parameters,
              parse: JSON.parse,
              function: (args: unknown) => {
                seen.push(args);
                return 'Sunny';
              },
            },
          },
        ],
      });
      const answer = await runner.finalContent();
      expect(seen).to.deep.equal([{ city: 'x', unit: 'c' }]);
      expect(answer).to.equal(words(12));
      expect(dp.fake.requests).to.have.length(2);
      const results = (dp.fake.requests[1]!.body as Json).messages as Json[];
      expect(results.at(-1)!.content).to.deep.include.members([]);
      expect((results.at(-1)!.content as Json[])[0]).to.include({ type: 'tool_result', content: 'Sunny' });
    });

    it('invalid JSON in a tool call argument is refused with a 400 naming the field, before anything is sent', async () => {
      const err = await client.chat.completions
        .create({
          model: MODEL,
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] },
            { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
          ],
        })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).to.include('messages[1].tool_calls[0].function.arguments');
      expect(dp.fake.requests).to.have.length(0);
    });
  });

  describe('refusals', () => {
    const refused: [string, Partial<OpenAI.ChatCompletionCreateParamsNonStreaming>][] = [
      ['n', { n: 2 }],
      ['logprobs', { logprobs: true }],
      ['response_format', { response_format: { type: 'json_object' } }],
      ['audio', { audio: { voice: 'alloy', format: 'mp3' }, modalities: ['text', 'audio'] }],
    ];
    for (const [field, extra] of refused) {
      it(`${field}: a 400 in the OpenAI shape naming it, nothing sent to the provider`, async () => {
        const err = await client.chat.completions
          .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], ...extra })
          .catch((e: unknown) => e);
        expect(err).to.be.instanceOf(OpenAI.BadRequestError);
        const e = err as InstanceType<typeof OpenAI.BadRequestError>;
        expect(e.status).to.equal(400);
        expect(e.message).to.match(new RegExp(`\\b(${field}|modalities)\\b`));
        expect(e.type).to.equal('invalid_request_error');
        expect(dp.fake.requests).to.have.length(0);
      });
    }

    it('response_format json_schema becomes Messages structured output (output_config.format)', async () => {
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
      await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } },
      });
      expect(upstream().output_config).to.deep.equal({ format: { type: 'json_schema', schema } });
    });

    it('fields that cannot change the answer are dropped, and neutral values of refused ones pass', async () => {
      await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        n: 1,
        seed: 7,
        store: false,
        logprobs: false,
        frequency_penalty: 0.5,
        response_format: { type: 'text' },
        metadata: { a: 'b' },
      });
      expect(Object.keys(upstream()).sort()).to.deep.equal(['max_tokens', 'messages', 'model']);
    });
  });

  describe('provider errors', () => {
    const cases: [number, string, abstract new (...args: never[]) => InstanceType<typeof OpenAI.APIError>, string][] = [
      [400, 'invalid_request_error', OpenAI.BadRequestError, 'invalid_request_error'],
      [401, 'authentication_error', OpenAI.AuthenticationError, 'invalid_request_error'],
      [429, 'rate_limit_error', OpenAI.RateLimitError, 'rate_limit_error'],
      [500, 'api_error', OpenAI.InternalServerError, 'server_error'],
    ];
    for (const [status, anthropicType, ErrorClass, openaiType] of cases) {
      for (const stream of [false, true]) {
        it(`${status} (${stream ? 'streamed' : 'not streamed'}): same status, OpenAI shape, the provider's message`, async () => {
          const message = `provider says ${status}`;
          dp.fake.enqueue({ kind: 'error', status, body: { type: 'error', error: { type: anthropicType, message } } });
          const call = stream
            ? client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion()
            : client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] });
          const err = await call.catch((e: unknown) => e);
          expect(err).to.be.instanceOf(ErrorClass);
          const e = err as InstanceType<typeof OpenAI.APIError>;
          expect(e.status).to.equal(status);
          expect(e.error).to.deep.include({ message, type: openaiType, param: null });
        });
      }
    }

    it('a provider that breaks off mid-stream ends the client stream with an error in the OpenAI shape, billed for what came', async () => {
      await dp.proxy.drain();
      const before = (await moneyOf(dp.cp.deps, k)).spend;
      dp.fake.enqueue({ kind: 'reset', afterEvents: 5 });
      const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true });
      let text = '';
      const err = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.APIError);
      expect((err as Error).message).to.include('broke off');
      expect(text).to.equal('tok1 tok2');
      await dp.proxy.drain();
      // 1 input token and the 2 output tokens generated before the break.
      expect((await moneyOf(dp.cp.deps, k)).spend - before).to.be.closeTo((1 * 3 + 2 * 15) / 1e6, 1e-9);
    });

    it('a client that leaves mid-stream leaves the provider call to finish, so its usage is billed', async () => {
      dp.fake.enqueue({ kind: 'ok', outputTokens: 200, eventDelayMs: 20 });
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true },
        { signal: controller.signal },
      );
      let contentChunks = 0;
      // The SDK ends the iteration quietly once its own signal aborts.
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) contentChunks++;
        controller.abort();
      }
      expect(contentChunks).to.be.lessThan(200);
      await dp.fake.idle();
      // Read on without the client (docs/proxy.md, "A client that leaves"): the provider bills all of it.
      expect(dp.fake.requests[0]!.aborted).to.equal(false);
    });
  });

  describe('money', () => {
    it('a call without max_tokens whose model ceiling does not fit the budget is sent with the ceiling the money pays for', async () => {
      // 64,000 output tokens at $15/Mtok = $0.96 does not fit a $0.50 budget: the call goes out lowered, not refused.
      const budgeted = await seedKey(dp.cp.deps, { models: [MODEL], budgetUsd: 0.5 });
      const poor = new OpenAI({ apiKey: budgeted.secret, baseURL: `${dp.proxy.url}/${budgeted.slug}/v1`, maxRetries: 0 });
      const { data, response } = await poor.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).withResponse();
      expect(data.choices[0]!.finish_reason).to.equal('stop');
      const limit = Number(response.headers.get('x-tollgate-output-limit'));
      expect(limit).to.be.above(0).and.below(64_000);
      expect(upstream().max_tokens, 'the Messages provider is sent the lowered ceiling').to.equal(limit);
      await dp.proxy.drain();
      // Billed what was used (1 input token at $3/Mtok + 12 output tokens at $15/Mtok), never more than the budget.
      expect((await moneyOf(dp.cp.deps, budgeted)).spend).to.be.closeTo((1 * 3 + 12 * 15) / 1e6, 1e-9);
    });
  });
});
