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
        { role: 'user', content: [{ type: 'text', text: 'efgh' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'QUJDRA==' } }] },
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
      'message_start', 'content_block_start', 'content_block_delta', 'content_block_delta',
      'content_block_stop', 'message_delta', 'message_stop',
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

  it('lists models in the Anthropic list shape', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).to.include('claude-haiku-4-5');
    expect(page.data[0]).to.include({ type: 'model' });
  });
});
