import { expect } from 'chai';
import { ApiError, FinishReason, FunctionCallingConfigMode, GoogleGenAI, type Content } from '@google/genai';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { rejectionOf, tokensFor, words } from './helpers.js';

describe('fake upstream: Gemini through the official @google/genai client', () => {
  let fake: FakeUpstream;
  let ai: GoogleGenAI;

  before(async () => {
    fake = await startFakeUpstream({ formats: 'gemini' });
    ai = new GoogleGenAI({ apiKey: 'goog-provider', httpOptions: { baseUrl: fake.geminiBaseUrl, apiVersion: 'v1beta' } });
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  const prompt = 'Say hello to the gateway, please.'; // 33 characters

  it('answers generateContent with 12 words, STOP, and usageMetadata from the character formula', async () => {
    const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: prompt, config: { systemInstruction: 'Be brief.' } });
    expect(answer.text).to.equal(words(12));
    expect(answer.candidates![0]!.finishReason).to.equal(FinishReason.STOP);
    const input = tokensFor('Be brief.'.length + prompt.length);
    expect(answer.usageMetadata).to.include({ promptTokenCount: input, candidatesTokenCount: 12, totalTokenCount: input + 12 });
    expect(fake.requests[0]).to.include({ path: '/v1beta/models/gemini-2.5-flash:generateContent', query: '' });
    expect(fake.requests[0]!.credential).to.deep.equal({ header: 'x-goog-api-key', key: 'goog-provider' });
  });

  it('streams with alt=sse, a chunk per token, the running usage on each and the final counts on the last', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 3, cachedTokens: 2, reasoningTokens: 5 });
    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: prompt })) chunks.push(chunk);
    expect(fake.requests[0]!.query).to.equal('?alt=sse');
    expect(chunks.map((c) => c.text).join('')).to.equal(words(3));
    const last = chunks.at(-1)!;
    expect(last.candidates![0]!.finishReason).to.equal(FinishReason.STOP);
    const input = tokensFor(prompt.length);
    expect(last.usageMetadata).to.include({
      promptTokenCount: input,
      candidatesTokenCount: 3,
      cachedContentTokenCount: 2,
      thoughtsTokenCount: 5,
      totalTokenCount: input + 8,
    });
    // Running totals, as Google's stream reports them: the candidates so far, the thinking whole from the first chunk.
    expect(chunks[0]!.usageMetadata).to.include({
      promptTokenCount: input,
      candidatesTokenCount: 1,
      thoughtsTokenCount: 5,
      totalTokenCount: input + 6,
    });
  });

  it('streams one JSON array without alt=sse, as Google does', async () => {
    const res = await fetch(`${fake.geminiBaseUrl}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=goog-provider`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: prompt }] }], generationConfig: { maxOutputTokens: 2 } }),
    });
    expect(res.headers.get('content-type')).to.equal('application/json');
    const chunks = (await res.json()) as Array<{ candidates: Array<{ content: { parts: Array<{ text: string }> }; finishReason?: string }> }>;
    expect(chunks.map((c) => c.candidates[0]!.content.parts[0]!.text).join('')).to.equal(words(2));
    expect(chunks.at(-1)!.candidates[0]!.finishReason).to.equal('MAX_TOKENS');
    expect(fake.requests[0]!.credential).to.deep.equal({ header: 'key', key: 'goog-provider' });
  });

  it('calls the declared function, then answers in text once its response comes back', async () => {
    const config = {
      tools: [
        { functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] },
      ],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } },
    };
    const asked: Content = { role: 'user', parts: [{ text: 'weather in Paris?' }] };
    const first = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: [asked], config });
    expect(first.functionCalls).to.deep.equal([{ name: 'get_weather', args: { city: 'x' } }]);
    const contents: Content[] = [
      asked,
      { role: 'model', parts: [{ functionCall: first.functionCalls![0]! }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] },
    ];
    const second = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents, config });
    expect(second.functionCalls).to.equal(undefined);
    expect(second.text).to.equal(words(12));
  });

  it('counts tokens as the same conversation would be billed', async () => {
    const counted = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: prompt });
    expect(counted.totalTokens).to.equal(tokensFor(prompt.length));
  });

  it("answers errors in Google's shape, and refuses a call without a key", async () => {
    fake.enqueue({ kind: 'error', status: 429 });
    const limited = await rejectionOf(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: prompt }));
    expect(limited).to.be.instanceOf(ApiError);
    expect((limited as ApiError).status).to.equal(429);
    expect(JSON.parse((limited as ApiError).message)).to.deep.include({
      error: { code: 429, message: 'Request failed: RESOURCE_EXHAUSTED.', status: 'RESOURCE_EXHAUSTED' },
    });
    const res = await fetch(`${fake.geminiBaseUrl}/v1beta/models/m:generateContent`, { method: 'POST', body: '{"contents":[]}' });
    expect(res.status).to.equal(403);
    expect(((await res.json()) as { error: { status: string } }).error.status).to.equal('PERMISSION_DENIED');
  });

  it("lists models in Google's shape", async () => {
    const pager = await ai.models.list();
    const names = pager.page.map((m) => m.name);
    expect(names).to.include('models/gemini-2.5-flash');
  });
});
