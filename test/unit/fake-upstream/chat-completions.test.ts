import { expect } from 'chai';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { rejectionOf, tokensFor, words } from './helpers.js';

describe('fake upstream: Chat Completions through the official openai client', () => {
  let fake: FakeUpstream;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeUpstream();
    client = new OpenAI({ apiKey: 'sk-provider', baseURL: fake.chatCompletionsBaseUrl, maxRetries: 0 });
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  const prompt = 'Say hello to the gateway, please.'; // 33 characters

  it('answers a non-streamed request with 12 words, stop, and usage from the character formula', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: prompt },
      ],
    });
    expect(completion.object).to.equal('chat.completion');
    expect(completion.id).to.match(/^chatcmpl-/);
    expect(completion.model).to.equal('gpt-4o-mini');
    expect(completion.choices[0]!.message).to.include({ role: 'assistant', content: words(12), refusal: null });
    expect(completion.choices[0]!.finish_reason).to.equal('stop');
    const input = tokensFor('Be brief.'.length + prompt.length);
    expect(completion.usage).to.include({ prompt_tokens: input, completion_tokens: 12, total_tokens: input + 12 });
  });

  it('caps the answer at max_completion_tokens with finish_reason length', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      max_completion_tokens: 4,
    });
    expect(completion.choices[0]!.message.content).to.equal(words(4));
    expect(completion.choices[0]!.finish_reason).to.equal('length');
    expect(completion.usage?.completion_tokens).to.equal(4);
  });

  it('counts text parts of array content and follows the outputTokens of an ok behaviour', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 3 });
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'abcdefghi' },
            { type: 'text', text: 'j' },
          ],
        },
      ],
      max_tokens: 100,
    });
    expect(completion.choices[0]!.message.content).to.equal('tok1 tok2 tok3');
    expect(completion.choices[0]!.finish_reason).to.equal('stop');
    expect(completion.usage?.prompt_tokens).to.equal(3);
  });

  it('streams one chunk per token and a final usage chunk when include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).to.equal(words(12));
    expect(chunks[0]!.choices[0]!.delta).to.include({ role: 'assistant', content: '' });
    expect(chunks.length).to.equal(1 + 12 + 1 + 1);
    expect(chunks[13]!.choices[0]!.finish_reason).to.equal('stop');
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).to.deep.equal([]);
    expect(last.usage).to.include({ prompt_tokens: tokensFor(prompt.length), completion_tokens: 12, total_tokens: tokensFor(prompt.length) + 12 });
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).to.equal(null);
  });

  it('streams without a usage chunk when include_usage is not asked for', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      max_tokens: 2,
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).to.equal(1 + 2 + 1);
    expect(chunks[3]!.choices[0]!.finish_reason).to.equal('length');
    for (const chunk of chunks) expect(chunk).not.to.have.property('usage');
  });

  it('an error behaviour surfaces as a typed APIError with the status and the OpenAI error shape', async () => {
    fake.enqueue({ kind: 'error', status: 429 });
    const err = await rejectionOf(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect(err).to.be.instanceOf(OpenAI.RateLimitError);
    const apiError = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).to.equal(429);
    expect(apiError.type).to.equal('rate_limit_error');
    expect(apiError.code).to.equal('rate_limit_exceeded');
  });

  it('an error behaviour with a body and headers sends them unchanged', async () => {
    fake.enqueue({
      kind: 'error',
      status: 503,
      body: { error: { message: 'busy', type: 'server_error', param: null, code: 'overloaded' } },
      headers: { 'retry-after': '7' },
    });
    const err = await rejectionOf(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).to.be.instanceOf(OpenAI.InternalServerError);
    const apiError = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).to.equal(503);
    expect(apiError.error).to.deep.equal({ message: 'busy', type: 'server_error', param: null, code: 'overloaded' });
    expect(apiError.headers?.get('retry-after')).to.equal('7');
  });

  it('uses queued behaviours in order, one per request, then falls back to ok', async () => {
    fake.enqueue({ kind: 'error', status: 500 }, { kind: 'ok', outputTokens: 1 });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };
    const first = await rejectionOf(client.chat.completions.create(body));
    expect((first as InstanceType<typeof OpenAI.APIError>).status).to.equal(500);
    expect((await client.chat.completions.create(body)).choices[0]!.message.content).to.equal('tok1');
    expect((await client.chat.completions.create(body)).choices[0]!.message.content).to.equal(words(12));
    expect(fake.requests).to.have.length(3);
  });

  it('records method, path, parsed body and the credential that arrived', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.requests).to.have.length(1);
    const [recorded] = fake.requests;
    expect(recorded).to.include({ method: 'POST', path: '/v1/chat/completions', aborted: false });
    expect(recorded!.body).to.deep.include({ model: 'gpt-4o-mini' });
    expect(recorded!.headers.authorization).to.equal('Bearer sk-provider');
    expect(recorded!.credential).to.deep.equal({ header: 'authorization', key: 'sk-provider' });
  });

  it('lists models in the OpenAI list shape', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).to.include('gpt-4o-mini');
  });
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } },
    },
    {
      type: 'function',
      function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string', enum: ['utc', 'local'] } } } },
    },
  ];

  it('calls every tool with arguments built from its schema, finish_reason tool_calls', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', tools, messages: [{ role: 'user', content: prompt }] });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).to.equal('tool_calls');
    expect(choice.message.content).to.equal(null);
    const calls = choice.message.tool_calls!.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []));
    expect(calls).to.deep.equal([
      ['get_weather', { city: 'x', days: 1 }],
      ['get_time', { zone: 'utc' }],
    ]);
    expect(choice.message.tool_calls![0]!.id).to.match(/^call_/);
  });

  it('streams tool calls as OpenAI does: id and name first, then argument fragments, per tool call index', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      tools,
      parallel_tool_calls: false,
      messages: [{ role: 'user', content: prompt }],
    });
    let fragments = 0;
    stream.on('tool_calls.function.arguments.delta', () => fragments++);
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!;
    expect(calls).to.have.length(1);
    expect(calls[0]!.type === 'function' && JSON.parse(calls[0]!.function.arguments)).to.deep.equal({ city: 'x', days: 1 });
    expect(fragments).to.be.greaterThan(1);
    expect(final.choices[0]!.finish_reason).to.equal('tool_calls');
  });

  it("answers in text once the last message is a tool result, or when tool_choice is 'none'", async () => {
    const answered = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      tools,
      messages: [
        { role: 'user', content: prompt },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(answered.choices[0]!.finish_reason).to.equal('stop');
    const none = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      tools,
      tool_choice: 'none',
      messages: [{ role: 'user', content: prompt }],
    });
    expect(none.choices[0]!.message.content).to.equal(words(12));
  });

  it('a stop sequence ends the text before it and is named in stop_reason, as vLLM does (streamed too)', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', stop: [' tok4'], messages: [{ role: 'user', content: prompt }] });
    expect(completion.choices[0]!.message.content).to.equal(words(3));
    expect(completion.choices[0]).to.deep.include({ finish_reason: 'stop', stop_reason: ' tok4' });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      stop: ' tok2',
      stream: true,
      messages: [{ role: 'user', content: prompt }],
    });
    const last: ChatCompletionChunk[] = [];
    for await (const chunk of stream) last.push(chunk);
    expect(last.at(-1)!.choices[0]).to.deep.include({ finish_reason: 'stop', stop_reason: ' tok2' });
  });
});
