import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { rejectionOf, tokensFor, words } from './helpers.js';

describe('fake upstream: Messages through the official @anthropic-ai/sdk client', () => {
  let fake: FakeUpstream;
  let client: Anthropic;

  before(async () => {
    fake = await startFakeUpstream();
    client = new Anthropic({ apiKey: 'sk-ant-provider', baseURL: fake.messagesBaseUrl, maxRetries: 0 });
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  const system = 'You are terse.'; // 14 characters
  const prompt = 'Tell me about toll gates.'; // 25 characters

  it('answers a non-streamed request with 12 words, end_turn, and usage from the character formula', async () => {
    const message = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      system,
      messages: [{ role: 'user', content: prompt }],
    });
    expect(message.id).to.match(/^msg_/);
    expect(message).to.include({ type: 'message', role: 'assistant', model: 'claude-haiku-4-5', stop_reason: 'end_turn', stop_sequence: null });
    expect(message.content).to.deep.equal([{ type: 'text', text: words(12) }]);
    expect(message.usage).to.include({ input_tokens: tokensFor(system.length + prompt.length), output_tokens: 12 });
  });

  it('caps the answer at max_tokens with stop_reason max_tokens', async () => {
    const message = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 5,
      messages: [{ role: 'user', content: prompt }],
    });
    expect(message.stop_reason).to.equal('max_tokens');
    expect(message.content).to.deep.equal([{ type: 'text', text: words(5) }]);
    expect(message.usage.output_tokens).to.equal(5);
  });

  it('counts text blocks of messages and of a block-form system prompt, ignoring other blocks', async () => {
    const message = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      system: [{ type: 'text', text: 'abcd' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'efgh' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'QUJDRA==' } },
          ],
        },
        { role: 'assistant', content: 'i' },
      ],
    });
    expect(message.usage.input_tokens).to.equal(3);
  });

  it('messages.stream().finalMessage() gives the full text and usage', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 20 });
    const stream = client.messages.stream({
      model: 'claude-haiku-4-5',
      max_tokens: 1000,
      messages: [{ role: 'user', content: prompt }],
    });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(deltas).to.have.length(20);
    expect(deltas.join('')).to.equal(words(20));
    expect(message.content).to.have.length(1);
    expect(message.content[0]).to.include({ type: 'text', text: words(20) });
    expect(message.stop_reason).to.equal('end_turn');
    expect(message.usage).to.include({ input_tokens: tokensFor(prompt.length), output_tokens: 20 });
  });

  it('streams events in the order the real API sends them', async () => {
    const stream = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 2,
      messages: [{ role: 'user', content: prompt }],
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'message_start') {
        expect(event.message.content).to.deep.equal([]);
        expect(event.message.usage).to.include({ input_tokens: tokensFor(prompt.length), output_tokens: 1 });
      }
      if (event.type === 'message_delta') {
        expect(event.delta).to.deep.equal({ stop_reason: 'max_tokens', stop_sequence: null });
        expect(event.usage.output_tokens).to.equal(2);
      }
    }
    // The SDK consumes `ping` itself; the raw wire test checks it is sent.
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

  it('an error behaviour surfaces as a typed APIError with the status and the Anthropic error shape', async () => {
    fake.enqueue({ kind: 'error', status: 529 });
    const err = await rejectionOf(client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).to.be.instanceOf(Anthropic.APIError);
    const apiError = err as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).to.equal(529);
    expect(apiError.error).to.deep.include({ type: 'error' });
    expect((apiError.error as { error: { type: string } }).error.type).to.equal('overloaded_error');
  });

  it('an error behaviour on a stream request fails stream().finalMessage() with the status', async () => {
    fake.enqueue({ kind: 'error', status: 401 });
    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const err = await rejectionOf(stream.finalMessage());
    expect(err).to.be.instanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).to.equal(401);
  });

  it('records the credential that arrived (this SDK sends its key as a Bearer token) and the anthropic-version header', async () => {
    await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const [recorded] = fake.requests;
    expect(recorded).to.include({ method: 'POST', path: '/anthropic/v1/messages', aborted: false });
    expect(recorded!.credential).to.deep.equal({ header: 'authorization', key: 'sk-ant-provider' });
    expect(recorded!.headers['anthropic-version']).to.be.a('string');
  });

  const weather: Anthropic.Tool = {
    name: 'get_weather',
    description: 'Weather for a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] }, days: { type: 'integer' } } },
  };

  it('answers a request with tools with a tool_use per tool, input built from the schema, stop_reason tool_use', async () => {
    const message = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      tools: [weather],
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    expect(message.stop_reason).to.equal('tool_use');
    expect(message.content).to.have.length(1);
    expect(message.content[0]).to.deep.include({ type: 'tool_use', name: 'get_weather', input: { city: 'x', unit: 'c', days: 1 } });
    expect((message.content[0] as Anthropic.ToolUseBlock).id).to.match(/^toolu_/);
  });

  it('streams tool input as input_json_delta fragments that the SDK assembles', async () => {
    const stream = client.messages.stream({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      tools: [weather, { ...weather, name: 'get_time' }],
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    const fragments: string[] = [];
    stream.on('inputJson', (partial) => fragments.push(partial));
    const message = await stream.finalMessage();
    expect(fragments.length).to.be.greaterThan(4);
    expect(message.stop_reason).to.equal('tool_use');
    expect(message.content.map((b) => (b as Anthropic.ToolUseBlock).name)).to.deep.equal(['get_weather', 'get_time']);
    expect((message.content[1] as Anthropic.ToolUseBlock).input).to.deep.equal({ city: 'x', unit: 'c', days: 1 });
  });

  it('answers in text once the last turn is a tool result, or when tool_choice is none; one call when parallel use is off', async () => {
    const first = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      tools: [weather, { ...weather, name: 'b' }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    expect(first.content).to.have.length(1);
    const call = first.content[0] as Anthropic.ToolUseBlock;
    const after = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }] },
      ],
    });
    expect(after.stop_reason).to.equal('end_turn');
    const none = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      tools: [weather],
      tool_choice: { type: 'none' },
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    expect(none.content[0]).to.include({ type: 'text' });
  });

  it('a stop sequence naming a word of the answer ends it there with stop_reason stop_sequence', async () => {
    const message = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      stop_sequences: [' tok4'],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message).to.include({ stop_reason: 'stop_sequence', stop_sequence: ' tok4' });
    expect(message.content).to.deep.equal([{ type: 'text', text: words(3) }]);
    expect(message.usage.output_tokens).to.equal(3);
  });

  it('counts tool calls, tool results and tool definitions by their content, not their JSON framing', async () => {
    const message = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      tools: [{ name: 'ab', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ab', input: { c: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'four' }] },
      ],
    });
    // q (1) + ab{"c":1} (2 + 7) + four (4) + tool ab{} (2 + 2) = 18 characters.
    expect(message.usage.input_tokens).to.equal(tokensFor(18));
  });

  it('counts tokens (messages.countTokens) as a call of the same body would be billed; a queued error answers it instead', async () => {
    const counted = await client.messages.countTokens({ model: 'claude-haiku-4-5', system, messages: [{ role: 'user', content: prompt }] });
    expect(counted).to.deep.equal({ input_tokens: tokensFor(system.length + prompt.length) });
    fake.enqueue({ kind: 'error', status: 529 });
    expect(await rejectionOf(client.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: prompt }] }))).to.include({
      status: 529,
    });
  });

  it('lists models in the Anthropic list shape', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).to.include('claude-haiku-4-5');
    expect(page.data[0]).to.include({ type: 'model' });
  });
});
