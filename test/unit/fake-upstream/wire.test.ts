import { expect } from 'chai';
import { request } from 'node:http';
import { countInputTokens, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { eventNames, rawRequest } from './helpers.js';

const OPENAI_AUTH = { authorization: 'Bearer sk-provider' };
const ANTHROPIC_AUTH = { 'x-api-key': 'sk-ant-provider', 'anthropic-version': '2023-06-01' };
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const MESSAGE = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

describe('fake upstream: the wire, without an SDK', () => {
  let fake: FakeUpstream;

  before(async () => {
    fake = await startFakeUpstream();
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  it('streams with text/event-stream, no-cache, chunked and no content-length', async () => {
    const res = await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, { ...CHAT, stream: true });
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/event-stream');
    expect(res.headers['cache-control']).to.equal('no-cache');
    expect(res.headers['transfer-encoding']).to.equal('chunked');
    expect(res.headers['content-length']).to.equal(undefined);
    expect(res.headers['x-request-id']).to.be.a('string');
  });

  it('writes each SSE event on its own: no HTTP chunk carries two events', async () => {
    const res = await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, {
      ...CHAT,
      stream: true,
      stream_options: { include_usage: true },
    });
    for (const chunk of res.chunks) expect(chunk.split('\n\n').length - 1).to.be.at.most(1);
    const frames = res.text.split('\n\n').filter((f) => f !== '');
    expect(frames).to.have.length(1 + 12 + 1 + 1 + 1);
    for (const frame of frames) expect(frame).to.match(/^data: /);
    expect(frames[frames.length - 1]).to.equal('data: [DONE]');
  });

  it('sends the Messages events in the documented order, ping included', async () => {
    const res = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', ANTHROPIC_AUTH, { ...MESSAGE, max_tokens: 2, stream: true });
    expect(res.headers['content-type']).to.equal('text/event-stream');
    expect(res.headers['request-id']).to.be.a('string');
    expect(eventNames(res.text)).to.deep.equal([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('a reader that stops and resumes still gets every event, in order (back-pressure)', async () => {
    const tokens = 20_000;
    fake.enqueue({ kind: 'ok', outputTokens: tokens });
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(`${fake.url}/v1/chat/completions`, { method: 'POST', headers: OPENAI_AUTH }, (res) => {
        const chunks: string[] = [];
        res.setEncoding('utf8');
        res.pause();
        setTimeout(() => res.resume(), 100);
        res.on('data', (chunk: string) => chunks.push(chunk));
        res.on('end', () => resolve(chunks.join('')));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ ...CHAT, stream: true }));
    });
    const frames = text.split('\n\n').filter((f) => f !== '');
    expect(frames).to.have.length(1 + tokens + 1 + 1);
    expect(frames[1]).to.include('"content":"tok1"');
    expect(frames[tokens]).to.include(`"content":" tok${tokens}"`);
  });

  it('401 in each provider shape when no credential header arrives', async () => {
    const openai = await rawRequest(fake.url, 'POST', '/v1/chat/completions', {}, CHAT);
    expect(openai.status).to.equal(401);
    expect(JSON.parse(openai.text)).to.deep.include({
      error: { message: "You didn't provide an API key.", type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
    const anthropic = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', { 'anthropic-version': '2023-06-01' }, MESSAGE);
    expect(anthropic.status).to.equal(401);
    expect(JSON.parse(anthropic.text)).to.deep.equal({
      type: 'error',
      error: { type: 'authentication_error', message: 'x-api-key header is required' },
    });
    const models = await rawRequest(fake.url, 'GET', '/v1/models');
    expect(models.status).to.equal(401);
    expect(fake.requests.map((r) => r.credential)).to.deep.equal([null, null, null]);
  });

  it('records an x-api-key credential on Messages', async () => {
    const res = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', ANTHROPIC_AUTH, MESSAGE);
    expect(res.status).to.equal(200);
    expect(fake.requests[0]!.credential).to.deep.equal({ header: 'x-api-key', key: 'sk-ant-provider' });
  });

  it('400 for a Messages request without anthropic-version, without consuming the queued behaviour', async () => {
    fake.enqueue({ kind: 'error', status: 500 });
    const res = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', { 'x-api-key': 'k' }, MESSAGE);
    expect(res.status).to.equal(400);
    expect(JSON.parse(res.text)).to.deep.equal({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    const next = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', ANTHROPIC_AUTH, MESSAGE);
    expect(next.status).to.equal(500);
    expect(JSON.parse(next.text)).to.deep.include({ type: 'error' });
  });

  it('400 for a body that is not JSON, recording the raw text', async () => {
    const res = await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, '{"model":');
    expect(res.status).to.equal(400);
    expect(JSON.parse(res.text).error.type).to.equal('invalid_request_error');
    expect(fake.requests[0]!.body).to.equal('{"model":');
  });

  it('400 for a Messages request without max_tokens, and for a non-positive token limit', async () => {
    const { max_tokens: _, ...withoutLimit } = MESSAGE;
    const missing = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', ANTHROPIC_AUTH, withoutLimit);
    expect(missing.status).to.equal(400);
    const zero = await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, { ...CHAT, max_tokens: 0 });
    expect(zero.status).to.equal(400);
  });

  it('404 in each provider shape for unknown paths and methods', async () => {
    const openai = await rawRequest(fake.url, 'GET', '/v1/chat/completions', OPENAI_AUTH);
    expect(openai.status).to.equal(404);
    expect(JSON.parse(openai.text).error).to.include({ type: 'invalid_request_error', message: 'Invalid URL (GET /v1/chat/completions)' });
    const anthropic = await rawRequest(fake.url, 'POST', '/anthropic/v1/complete', ANTHROPIC_AUTH, MESSAGE);
    expect(anthropic.status).to.equal(404);
    expect(JSON.parse(anthropic.text)).to.deep.include({ type: 'error' });
    expect(JSON.parse(anthropic.text).error.type).to.equal('not_found_error');
  });

  it('an error behaviour on a stream request answers JSON with its status, not a stream', async () => {
    fake.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '3' } });
    const res = await rawRequest(fake.url, 'POST', '/anthropic/v1/messages', ANTHROPIC_AUTH, { ...MESSAGE, stream: true });
    expect(res.status).to.equal(429);
    expect(res.headers['content-type']).to.equal('application/json');
    expect(res.headers['retry-after']).to.equal('3');
    expect(JSON.parse(res.text).error.type).to.equal('rate_limit_error');
  });

  it('strips the query string from the recorded path', async () => {
    await rawRequest(fake.url, 'GET', '/anthropic/v1/models?limit=5', ANTHROPIC_AUTH);
    expect(fake.requests[0]).to.include({ method: 'GET', path: '/anthropic/v1/models', body: undefined });
  });

  it('waitForRequests resolves once enough requests arrived; reset clears requests and queue in place', async () => {
    const requests = fake.requests;
    const waiting = fake.waitForRequests(2);
    await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, CHAT);
    await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, CHAT);
    await waiting;
    fake.enqueue({ kind: 'error', status: 500 });
    fake.reset();
    expect(requests).to.have.length(0);
    expect((await rawRequest(fake.url, 'POST', '/v1/chat/completions', OPENAI_AUTH, CHAT)).status).to.equal(200);
  });
});

describe('fake upstream: speaking one format only', () => {
  for (const [formats, spoken, unspoken] of [
    ['messages', '/anthropic/v1/messages', '/v1/chat/completions'],
    ['chat', '/v1/chat/completions', '/anthropic/v1/messages'],
  ] as const) {
    it(`formats: '${formats}' answers ${spoken} and 404s ${unspoken}`, async () => {
      const fake = await startFakeUpstream({ formats });
      try {
        const body = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
        const headers = { ...OPENAI_AUTH, ...ANTHROPIC_AUTH };
        expect((await rawRequest(fake.url, 'POST', spoken, headers, body)).status).to.equal(200);
        expect((await rawRequest(fake.url, 'POST', unspoken, headers, body)).status).to.equal(404);
      } finally {
        await fake.close();
      }
    });
  }
});

describe('fake upstream: input token formula', () => {
  it('is ceil(characters / 4) over string contents, text blocks and the system prompt, at least 1', () => {
    expect(countInputTokens({ messages: [] })).to.equal(1);
    expect(countInputTokens({ messages: [{ role: 'user', content: 'abcd' }] })).to.equal(1);
    expect(countInputTokens({ messages: [{ role: 'user', content: 'abcde' }] })).to.equal(2);
    expect(
      countInputTokens({
        system: [{ type: 'text', text: 'abc' }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'defgh' },
              { type: 'image_url', image_url: { url: 'data:xxxxxxxxxxxxxxxx' } },
            ],
          },
          { role: 'assistant', content: 'ijk' },
        ],
      }),
    ).to.equal(3);
    expect(countInputTokens({ system: 'x'.repeat(40), messages: [{ role: 'user', content: 'y' }] })).to.equal(11);
  });
});
