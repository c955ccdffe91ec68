import { expect } from 'chai';
import { countTokensCall, outputCeiling, parseCall, upstreamCall } from '../../../../proxy/wire/index.js';
import { embeddingsCall, parseEmbeddings } from '../../../../proxy/wire/embeddings.js';
import { testConfig } from '../../../support/control-plane.js';
import type { AppError } from '../../../../shared/errors.js';
import type { ProviderConfig } from '../../../../shared/models.js';

const catalog = testConfig().models;
const sonnet = catalog.models.get('tg/sonnet')!;
const provider = catalog.providers.get('primary')!;
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const messages = [{ role: 'user', content: 'hi' }];

function status(f: () => unknown): number | undefined {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as AppError).status;
  }
}

describe('proxy: request formats', () => {
  it('holds for the model maximum when a Chat Completions call names no limit, and for each of n choices', () => {
    expect(outputCeiling(parseCall('chat', json({ model: 'tg/sonnet', messages }), {}), sonnet)).to.equal(64000);
    expect(outputCeiling(parseCall('chat', json({ model: 'tg/sonnet', messages, max_tokens: 10, n: 3 }), {}), sonnet)).to.equal(30);
    expect(outputCeiling(parseCall('chat', json({ model: 'tg/sonnet', messages, max_tokens: 10, max_completion_tokens: 20 }), {}), sonnet)).to.equal(
      20,
    );
    expect(outputCeiling(parseCall('chat', json({ model: 'tg/sonnet', messages, max_tokens: 10_000_000 }), {}), sonnet)).to.equal(64000);
  });

  it('400 for what each format requires and for nonsense limits', () => {
    const v = { 'anthropic-version': '2023-06-01' };
    expect(status(() => parseCall('messages', json({ model: 'tg/sonnet', messages }), v))).to.equal(400);
    expect(status(() => parseCall('messages', json({ model: 'tg/sonnet', messages, max_tokens: 5 }), {}))).to.equal(400);
    expect(status(() => parseCall('messages', json({ model: 'tg/sonnet', messages, max_tokens: 0 }), v))).to.equal(400);
    expect(status(() => parseCall('chat', json({ model: 'tg/sonnet', messages, max_tokens: 1.5 }), {}))).to.equal(400);
    expect(status(() => parseCall('chat', json({ model: 'tg/sonnet', messages, stream: 'yes' }), {}))).to.equal(400);
    expect(status(() => parseCall('chat', json({ model: 'tg/sonnet', messages, n: 1000 }), {}))).to.equal(400);
    expect(status(() => parseCall('chat', json({ model: 7, messages }), {}))).to.equal(400);
    expect(status(() => parseCall('messages', json({ model: 'tg/sonnet', messages, max_tokens: 5 }), v))).to.equal(undefined);
  });

  it('rewrites only the model, and asks for the usage chunk on a streamed Chat Completions call the client left without it', () => {
    const call = parseCall('chat', json({ model: 'tg/sonnet', messages, stream: true, temperature: 0.2 }), {});
    const up = upstreamCall('chat', call, sonnet, provider);
    expect(JSON.parse(up.body.toString())).to.deep.equal({
      model: 'claude-sonnet-4-5',
      messages,
      stream: true,
      temperature: 0.2,
      stream_options: { include_usage: true },
    });
    expect(up.dropUsageChunk).to.equal(true);
    expect(up.path).to.equal('/v1/chat/completions');
    const asked = upstreamCall(
      'chat',
      parseCall('chat', json({ model: 'tg/sonnet', messages, stream: true, stream_options: { include_usage: true } }), {}),
      sonnet,
      provider,
    );
    expect(asked.dropUsageChunk).to.equal(false);
    const m = upstreamCall(
      'messages',
      parseCall('messages', json({ model: 'tg/sonnet', messages, max_tokens: 5 }), { 'anthropic-version': 'x' }),
      sonnet,
      provider,
    );
    expect(m.path).to.equal('/anthropic/v1/messages');
    expect(m.authHeader).to.equal('x-api-key');
  });

  it("keeps a provider base URL's own query string (Azure's api-version) after the API's path, for every format and for counts", () => {
    const azure: ProviderConfig = {
      ...provider,
      endpoints: {
        chat: { base_url: 'https://r.example/openai/deployments/d/?api-version=2024-10-21', auth_header: undefined },
        messages: { base_url: 'https://m.example/anthropic?tenant=t', auth_header: undefined },
        responses: { base_url: 'https://r.example/openai?api-version=2025-04-01', auth_header: undefined },
      },
    };
    const v = { 'anthropic-version': '2023-06-01' };
    const chat = upstreamCall('chat', parseCall('chat', json({ model: 'tg/sonnet', messages }), {}), sonnet, azure);
    expect(chat.path).to.equal('/openai/deployments/d/chat/completions?api-version=2024-10-21');
    const m = upstreamCall('messages', parseCall('messages', json({ model: 'tg/sonnet', messages, max_tokens: 5 }), v), sonnet, azure);
    expect(m.path).to.equal('/anthropic/v1/messages?tenant=t');
    const r = upstreamCall('responses', parseCall('responses', json({ model: 'tg/sonnet', input: 'hi' }), {}), sonnet, azure);
    expect(r.path).to.equal('/openai/responses?api-version=2025-04-01');
    const count = countTokensCall('messages', parseCall('messages', json({ model: 'tg/sonnet', messages }), v, 'count'), sonnet, azure);
    expect(count?.path).to.equal('/anthropic/v1/messages/count_tokens?tenant=t');
    const embed = embeddingsCall(parseEmbeddings(json({ model: 'tg/sonnet', input: 'hi' })), sonnet, azure);
    expect(embed.path).to.equal('/openai/deployments/d/embeddings?api-version=2024-10-21');
  });

  it("sends a translated call to a Messages provider the API version and the provider's own headers, the same on every call", () => {
    const messagesOnly: ProviderConfig = {
      ...provider,
      endpoints: { messages: { base_url: 'https://m.example', auth_header: undefined } },
      extra_headers: { 'x-org': 'ops', 'anthropic-version': '2099-01-01' },
    };
    const call = () => upstreamCall('chat', parseCall('chat', json({ model: 'tg/sonnet', messages }), {}), sonnet, messagesOnly);
    const first = call();
    expect(first.format).to.equal('messages');
    expect(first.path).to.equal('/v1/messages');
    // The operator's own version wins over the default, as before.
    expect(first.extraHeaders).to.deep.equal({ 'anthropic-version': '2099-01-01', 'x-org': 'ops' });
    expect(call().extraHeaders).to.equal(first.extraHeaders);
    const plain = { ...messagesOnly, extra_headers: undefined };
    const second = upstreamCall('chat', parseCall('chat', json({ model: 'tg/sonnet', messages }), {}), sonnet, plain);
    expect(second.extraHeaders).to.deep.equal({ 'anthropic-version': '2023-06-01' });
  });

  it("forwards the client's own bytes with only the model replaced: spacing, key order and escapes survive", () => {
    const raw = Buffer.from('{ "messages" : [{"role":"user","content":"caf\\u00e9 \\"model\\""}],\n  "model" :  "tg/sonnet", "temperature":0.20 }');
    const up = upstreamCall('chat', parseCall('chat', raw, {}), sonnet, provider);
    expect(up.body.toString()).to.equal(
      '{ "messages" : [{"role":"user","content":"caf\\u00e9 \\"model\\""}],\n  "model" :  "claude-sonnet-4-5", "temperature":0.20 }',
    );
  });

  it('re-serializes a body whose "model" text occurs twice, replacing only the top-level model', () => {
    const raw = json({ model: 'tg/sonnet', messages, metadata: { model: 'tg/sonnet' } });
    const up = upstreamCall('chat', parseCall('chat', raw, {}), sonnet, provider);
    expect(JSON.parse(up.body.toString())).to.deep.equal({ model: 'claude-sonnet-4-5', messages, metadata: { model: 'tg/sonnet' } });
  });

  it('re-serializes a body whose model alias is written with escapes', () => {
    const raw = Buffer.from('{"model":"tg\\/sonnet","messages":[{"role":"user","content":"hi"}]}');
    const up = upstreamCall('chat', parseCall('chat', raw, {}), sonnet, provider);
    expect(JSON.parse(up.body.toString())).to.deep.equal({ model: 'claude-sonnet-4-5', messages });
  });
});
