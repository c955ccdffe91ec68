import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, type Content, type GenerateContentConfig } from '@google/genai';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { RunningProxy } from '../../../proxy/runtime.js';
import type { TestControlPlane } from '../../support/control-plane.js';
import { seedAnotherKey, type SeededKey } from '../../support/data-plane.js';
import type { FakeUpstream } from '../../support/fake-upstream/index.js';
import { startCloudPlane, type CloudPlane } from '../../support/fake-clouds/cloud-plane.js';
import type { FakeVertex, VertexCall } from '../../support/fake-clouds/vertex.js';
import { usageRows } from '../../support/fake-clouds/usage-rows.js';
import { describeEachStore } from '../../support/stores.js';

const TOOL = { name: 'get_weather', description: 'Weather for a city', schema: { type: 'object', properties: { city: { type: 'string' } } } };

/** 100 tokens in at $3 and 20 out at $15 per million: what each scripted call costs. */
const CALL = { kind: 'ok' as const, inputTokens: 100, outputTokens: 20 };
const CALL_ROW = { amount: '0.000600000000000', input_tokens: 100, output_tokens: 20, cache_read_tokens: 0, cache_write_tokens: 0 };

/** Where each call since `from` went on Vertex: publisher, model, method and query. */
function wentTo(vertex: FakeVertex, from: number): string[] {
  return vertex.calls.slice(from).map((c: VertexCall) => `${c.publisher}/${c.model}:${c.method}${c.query ? `?${c.query}` : ''}`);
}

/**
 * A Gemini model on a Vertex AI provider (`tg/gemini`, `gemini-2.5-flash`):
 * called in Gemini's format at Vertex's `publishers/google` paths with the
 * provider's Google token (the fake takes no key and no other token), by a
 * plain Gemini client unchanged and by OpenAI and Anthropic clients through
 * the pivot; usage read from `usageMetadata`, billed exactly on the key.
 */
describeEachStore("proxy: Gemini models on Vertex AI, at Vertex's Google paths", (store) => {
  let plane: CloudPlane;
  let upstream: FakeUpstream;
  let vertex: FakeVertex;
  let cp: TestControlPlane;
  let proxy: RunningProxy;
  let key: SeededKey;

  before(async function () {
    this.timeout(60_000);
    plane = await startCloudPlane(store);
    ({ upstream, vertex, cp, proxy, key } = plane);
  });
  after(async () => {
    await plane?.close();
  });

  function genai(k: SeededKey): GoogleGenAI {
    return new GoogleGenAI({ apiKey: k.secret, httpOptions: { baseUrl: `${proxy.url}/${k.slug}` } });
  }

  it('@google/genai: generateContent and its stream go to generateContent and streamGenerateContent?alt=sse with a Google token, no key, no model in the body', async () => {
    const fresh = await seedAnotherKey(cp.deps, key);
    const from = vertex.calls.length;
    // The cached part of the prompt is a cache read (Gemini's default: a tenth of input); thinking is output.
    upstream.enqueue({ kind: 'ok', inputTokens: 1100, outputTokens: 20, cachedTokens: 1000, reasoningTokens: 30 }, CALL);
    const ai = genai(fresh);
    const answer = await ai.models.generateContent({ model: 'tg/gemini', contents: 'What is the weather in Paris?' });
    expect(answer.text).to.match(/^tok1 /);
    expect(answer.usageMetadata).to.include({ promptTokenCount: 1100, cachedContentTokenCount: 1000, thoughtsTokenCount: 30 });
    let streamed = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'tg/gemini', contents: 'What is the weather in Paris?' }))
      streamed += chunk.text ?? '';
    expect(streamed).to.match(/^tok1 .* tok20$/);
    expect(wentTo(vertex, from)).to.deep.equal(['google/gemini-2.5-flash:generateContent', 'google/gemini-2.5-flash:streamGenerateContent?alt=sse']);
    for (const call of vertex.calls.slice(from)) {
      expect(call).to.include({ project: 'test-project', location: 'us-east5' });
      expect(call.headers.authorization).to.match(/^Bearer ya29\.fake-/);
      expect(call.headers).not.to.have.property('x-goog-api-key');
      expect(call.body).not.to.have.property('model');
    }
    expect(vertex.refusedTokens).to.deep.equal([]);
    // 100 × $3 + (20 + 30) × $15 + 1000 × $0.30, per million; and the plain call (settled in one batch: no order).
    expect(await usageRows(proxy, cp, fresh)).to.have.deep.members([
      { amount: '0.001350000000000', input_tokens: 100, output_tokens: 50, cache_read_tokens: 1000, cache_write_tokens: 0 },
      CALL_ROW,
    ]);
  });

  it('@google/genai: a function-call round trip, and countTokens at Vertex (not billed)', async () => {
    const fresh = await seedAnotherKey(cp.deps, key);
    const from = vertex.calls.length;
    upstream.enqueue(CALL, CALL);
    const ai = genai(fresh);
    const config: GenerateContentConfig = {
      tools: [{ functionDeclarations: [{ name: TOOL.name, description: TOOL.description, parametersJsonSchema: TOOL.schema }] }],
    };
    const asked: Content = { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] };
    const first = await ai.models.generateContent({ model: 'tg/gemini', contents: [asked], config });
    const call = first.functionCalls?.[0];
    expect(call?.name).to.equal(TOOL.name);
    const contents: Content[] = [
      asked,
      { role: 'model', parts: [{ functionCall: call! }] },
      { role: 'user', parts: [{ functionResponse: { id: call!.id, name: TOOL.name, response: { output: 'Sunny.' } } }] },
    ];
    const second = await ai.models.generateContent({ model: 'tg/gemini', contents, config });
    expect(second.functionCalls).to.equal(undefined);
    expect(second.text).to.match(/^tok1 /);
    const counted = await ai.models.countTokens({ model: 'tg/gemini', contents: 'What is the weather in Paris?' });
    expect(counted.totalTokens).to.be.a('number').and.greaterThan(0);
    expect(wentTo(vertex, from)).to.deep.equal([
      'google/gemini-2.5-flash:generateContent',
      'google/gemini-2.5-flash:generateContent',
      'google/gemini-2.5-flash:countTokens',
    ]);
    expect(vertex.calls.at(-2)!.body.contents).to.have.length(3);
    expect(await usageRows(proxy, cp, fresh)).to.deep.equal([CALL_ROW, CALL_ROW]);
  });

  it('the OpenAI SDK: a Chat call and its stream, translated to Gemini on Vertex, billed from usageMetadata', async () => {
    const fresh = await seedAnotherKey(cp.deps, key);
    const from = vertex.calls.length;
    upstream.enqueue(CALL, CALL);
    const client = new OpenAI({ baseURL: `${proxy.url}/${fresh.slug}/v1`, apiKey: fresh.secret, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const answer = await client.chat.completions.create({ model: 'tg/gemini', messages });
    expect(answer.choices[0]?.message.content).to.match(/^tok1 /);
    expect(answer.usage).to.include({ prompt_tokens: 100, completion_tokens: 20 });
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ model: 'tg/gemini', messages, stream: true }))
      streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed).to.equal(answer.choices[0]?.message.content);
    expect(wentTo(vertex, from)).to.deep.equal(['google/gemini-2.5-flash:generateContent', 'google/gemini-2.5-flash:streamGenerateContent?alt=sse']);
    expect(await usageRows(proxy, cp, fresh)).to.deep.equal([CALL_ROW, CALL_ROW]);
  });

  it('the Anthropic SDK: a Messages call and its stream, translated to Gemini on Vertex (never rawPredict), billed exactly', async () => {
    const fresh = await seedAnotherKey(cp.deps, key);
    const from = vertex.calls.length;
    upstream.enqueue(CALL, CALL);
    const client = new Anthropic({ baseURL: `${proxy.url}/${fresh.slug}/anthropic`, apiKey: fresh.secret, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const answer = await client.messages.create({ model: 'tg/gemini', max_tokens: 64, messages });
    expect(answer.content[0]?.type).to.equal('text');
    expect(answer.usage).to.include({ input_tokens: 100, output_tokens: 20 });
    const streamed = await client.messages.stream({ model: 'tg/gemini', max_tokens: 64, messages }).finalMessage();
    expect(streamed.usage.output_tokens).to.equal(20);
    expect(wentTo(vertex, from)).to.deep.equal(['google/gemini-2.5-flash:generateContent', 'google/gemini-2.5-flash:streamGenerateContent?alt=sse']);
    expect(vertex.calls.at(-1)!.headers).not.to.have.property('anthropic-beta');
    expect(await usageRows(proxy, cp, fresh)).to.deep.equal([CALL_ROW, CALL_ROW]);
  });

  it("sends a Gemini client's call for a Claude model on the same provider to rawPredict, translated through the pivot", async () => {
    const from = vertex.calls.length;
    const answer = await genai(key).models.generateContent({ model: 'tg/sonnet', contents: 'hi' });
    expect(answer.text).to.be.a('string');
    expect(wentTo(vertex, from)).to.deep.equal(['anthropic/claude-sonnet-4-5@20250929:rawPredict']);
  });
});
