import { expect } from 'chai';
import OpenAI from 'openai';
import { countInputTokens, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { eventNames, rawRequest, rejectionOf, tokensFor, words } from './helpers.js';

const AUTH = { authorization: 'Bearer sk-provider' };

describe('fake upstream: Responses through the official openai client', () => {
  let fake: FakeUpstream;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeUpstream();
    client = new OpenAI({ apiKey: 'sk-provider', baseURL: fake.responsesBaseUrl, maxRetries: 0 });
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  const prompt = 'Say hello to the gateway, please.'; // 33 characters

  it('answers with a message item and usage from the character formula over instructions and input', async () => {
    const response = await client.responses.create({ model: 'gpt-5', instructions: 'Be brief.', input: prompt });
    expect(response.id).to.match(/^resp_/);
    expect(response.status).to.equal('completed');
    expect(response.output_text).to.equal(words(12));
    const input = tokensFor('Be brief.'.length + prompt.length);
    expect(response.usage).to.deep.include({ input_tokens: input, output_tokens: 12, total_tokens: input + 12 });
    expect(response.usage?.input_tokens_details.cached_tokens).to.equal(0);
    expect(fake.requests[0]!.path).to.equal('/v1/responses');
  });

  it('reports cached and reasoning tokens as OpenAI does, with a reasoning item first', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 3, cachedTokens: 5, reasoningTokens: 4 });
    const response = await client.responses.create({ model: 'gpt-5', input: 'x'.repeat(40) });
    expect(response.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expect(response.usage).to.deep.include({ input_tokens: 10, output_tokens: 7 });
    expect(response.usage?.input_tokens_details.cached_tokens).to.equal(5);
    expect(response.usage?.output_tokens_details.reasoning_tokens).to.equal(4);
  });

  it('is incomplete when max_output_tokens cuts the answer', async () => {
    const response = await client.responses.create({ model: 'gpt-5', input: prompt, max_output_tokens: 4 });
    expect(response.status).to.equal('incomplete');
    expect(response.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
    expect(response.output_text).to.equal(words(4));
  });

  it('streams the numbered events the SDK assembles into the same answer', async () => {
    const stream = client.responses.stream({ model: 'gpt-5', input: prompt });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(text).to.equal(words(12));
    expect(final.output_text).to.equal(words(12));
    expect(types.slice(0, 4)).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.at(-1)).to.equal('response.completed');
    expect(final.usage?.output_tokens).to.equal(12);
  });

  it('calls function tools, and answers in text once the last input item is the tool output', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    ];
    const first = await client.responses.create({ model: 'gpt-5', input: 'Weather?', tools });
    const call = first.output[0]!;
    expect(call).to.deep.include({ type: 'function_call', name: 'weather', arguments: '{"city":"x"}', status: 'completed' });
    if (call.type !== 'function_call') throw new Error('expected a function call');
    expect(call.call_id).to.match(/^call_/);
    const stream = client.responses.stream({
      model: 'gpt-5',
      tools,
      input: [{ role: 'user', content: 'Weather?' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    expect((await stream.finalResponse()).output_text).to.equal(words(12));
  });

  it('streams tool call arguments in fragments that join to the whole arguments', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    ];
    const raw = await rawRequest(fake.url, 'POST', '/v1/responses', AUTH, { model: 'gpt-5', input: 'Weather?', tools, stream: true });
    const names = eventNames(raw.text);
    expect(names).to.include.members(['response.function_call_arguments.delta', 'response.function_call_arguments.done']);
    const deltas = raw.text
      .split('\n\n')
      .filter((f) => f.includes('"response.function_call_arguments.delta"'))
      .map((f) => (JSON.parse(f.split('\ndata: ')[1]!) as { delta: string }).delta);
    expect(deltas.join('')).to.equal('{"city":"x"}');
    const numbers = raw.text
      .split('\n\n')
      .filter(Boolean)
      .map((f) => (JSON.parse(f.split('\ndata: ')[1]!) as { sequence_number: number }).sequence_number);
    expect(numbers).to.deep.equal(numbers.map((_, i) => i));
  });

  it('answers scripted errors in the OpenAI shape, and refuses calls without a key or with bad input', async () => {
    fake.enqueue({ kind: 'error', status: 429 });
    const err = await rejectionOf(client.responses.create({ model: 'gpt-5', input: 'x' }));
    expect(err).to.be.instanceOf(OpenAI.RateLimitError);
    expect((await rawRequest(fake.url, 'POST', '/v1/responses', {}, { model: 'm', input: 'x' })).status).to.equal(401);
    const bad = await rawRequest(fake.url, 'POST', '/v1/responses', AUTH, { model: 'm', input: 3 });
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.text).error.type).to.equal('invalid_request_error');
  });

  it('counts input tokens at /v1/responses/input_tokens as a model call of the same body would be billed', async () => {
    const res = await rawRequest(fake.url, 'POST', '/v1/responses/input_tokens', AUTH, { model: 'gpt-5', input: 'x'.repeat(40) });
    expect(JSON.parse(res.text)).to.deep.equal({ object: 'response.input_tokens', input_tokens: 10 });
  });
});

describe('fake upstream: Responses spoken alone', () => {
  it("formats: 'responses' answers /v1/responses and 404s the other formats", async () => {
    const fake = await startFakeUpstream({ formats: 'responses' });
    try {
      const headers = { ...AUTH, 'anthropic-version': '2023-06-01' };
      expect((await rawRequest(fake.url, 'POST', '/v1/responses', headers, { model: 'm', input: 'hi' })).status).to.equal(200);
      const chat = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
      expect((await rawRequest(fake.url, 'POST', '/v1/chat/completions', headers, chat)).status).to.equal(404);
      expect((await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', headers, chat)).status).to.equal(404);
    } finally {
      await fake.close();
    }
  });

  it("formats: 'both' (Chat and Messages) 404s /v1/responses", async () => {
    const fake = await startFakeUpstream({ formats: 'both' });
    try {
      expect((await rawRequest(fake.url, 'POST', '/v1/responses', AUTH, { model: 'm', input: 'hi' })).status).to.equal(404);
    } finally {
      await fake.close();
    }
  });

  it('counts the same conversation the same in Responses items as in Chat messages', () => {
    const chat = {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'weather', arguments: '{"city": "x"}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'sunny' },
      ],
    };
    const responses = {
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
        { type: 'function_call', call_id: 'c', name: 'weather', arguments: '{"city":"x"}' },
        { type: 'function_call_output', call_id: 'c', output: 'sunny' },
      ],
    };
    expect(countInputTokens(responses)).to.equal(countInputTokens(chat));
  });
});
