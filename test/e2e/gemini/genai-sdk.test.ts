import { expect } from 'chai';
import { FinishReason, GoogleGenAI, type Content, type GenerateContentConfig } from '@google/genai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedAnotherKey, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

const SYSTEM = 'You answer questions about the weather.';
const QUESTION = 'What is the weather in Paris today?';
const RESULT = 'Sunny, 21 degrees.';
const TOOL = { name: 'get_weather', description: 'Weather for a city', schema: { type: 'object', properties: { city: { type: 'string' } } } };

/** One answer of the fake provider: 12 tokens of text at $15/Mtok, the input at $3/Mtok. */
const perCall = (chars: number) => (Math.ceil(chars / 4) * 3 + 12 * 15) / 1e6;

/**
 * The `@google/genai` SDK, unchanged, against Tollgate: `generateContent`,
 * `generateContentStream` and a function-call round trip, on a provider that
 * speaks Gemini (passed through), one that speaks only Chat Completions, one
 * that speaks only Messages and one that speaks only Responses (translated); every call billed on the key,
 * the same conversation at the same price whichever provider served it.
 */
describeEachStore('e2e: the @google/genai SDK through Tollgate', (store) => {
  let dp: DataPlane;
  let base: SeededKey;

  before(async () => {
    dp = await startDataPlane(store);
    base = await seedKey(dp.cp.deps, { models: ['tg/gemini-direct', 'tg/gpt-direct', 'tg/claude-direct', 'tg/gpt-responses'] });
  });
  after(() => dp.close());

  async function client(): Promise<{ key: SeededKey; ai: GoogleGenAI }> {
    const key = await seedAnotherKey(dp.cp.deps, base);
    // The SDK's default API version is v1; Tollgate serves Gemini's actions there as on v1beta.
    return { key, ai: new GoogleGenAI({ apiKey: key.secret, httpOptions: { baseUrl: `${dp.proxy.url}/${key.slug}` } }) };
  }

  const config: GenerateContentConfig = {
    systemInstruction: SYSTEM,
    tools: [{ functionDeclarations: [{ name: TOOL.name, description: TOOL.description, parametersJsonSchema: TOOL.schema }] }],
  };

  for (const alias of ['tg/gemini-direct', 'tg/gpt-direct', 'tg/claude-direct', 'tg/gpt-responses']) {
    it(`${alias}: generateContent and generateContentStream answer, billed on the key`, async () => {
      const { key, ai } = await client();
      const answer = await ai.models.generateContent({ model: alias, contents: QUESTION });
      expect(answer.text).to.match(/^tok1 tok2 .* tok12$/);
      expect(answer.candidates![0]!.finishReason).to.equal(FinishReason.STOP);
      expect(answer.usageMetadata).to.include({ candidatesTokenCount: 12 });
      let text = '';
      for await (const chunk of await ai.models.generateContentStream({ model: alias, contents: QUESTION })) text += chunk.text ?? '';
      expect(text).to.equal(answer.text);
      await dp.proxy.drain();
      expect((await moneyOf(dp.cp.deps, key)).spend).to.be.closeTo(2 * perCall(QUESTION.length), 1e-12);
    });

    it(`${alias}: a function-call round trip`, async () => {
      const { ai } = await client();
      const asked: Content = { role: 'user', parts: [{ text: QUESTION }] };
      const first = await ai.models.generateContent({ model: alias, contents: [asked], config });
      const call = first.functionCalls?.[0];
      expect(call?.name).to.equal(TOOL.name);
      expect(call?.args).to.deep.equal({ city: 'x' });
      const contents: Content[] = [
        asked,
        { role: 'model', parts: [{ functionCall: call! }] },
        { role: 'user', parts: [{ functionResponse: { id: call!.id, name: TOOL.name, response: { output: RESULT } } }] },
      ];
      const second = await ai.models.generateContent({ model: alias, contents, config });
      expect(second.functionCalls).to.equal(undefined);
      expect(second.text).to.match(/^tok1 /);
    });
  }

  it('the same conversation costs the same on every provider', async () => {
    const spend: Record<string, number> = {};
    const contents: Content[] = [
      { role: 'user', parts: [{ text: QUESTION }] },
      { role: 'model', parts: [{ functionCall: { id: 'call_1', name: TOOL.name, args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: TOOL.name, response: { output: RESULT } } }] },
    ];
    for (const alias of ['tg/gemini-direct', 'tg/gpt-direct', 'tg/claude-direct', 'tg/gpt-responses']) {
      const { key, ai } = await client();
      await ai.models.generateContent({ model: alias, contents, config: { ...config, maxOutputTokens: 100 } });
      await dp.proxy.drain();
      spend[alias] = (await moneyOf(dp.cp.deps, key)).spend;
    }
    // As test/e2e/sdk/translation-spend.test.ts counts the same conversation in the other formats.
    const chars =
      SYSTEM.length +
      QUESTION.length +
      TOOL.name.length +
      JSON.stringify({ city: 'Paris' }).length +
      RESULT.length +
      TOOL.name.length +
      TOOL.description.length +
      JSON.stringify(TOOL.schema.properties).length;
    for (const alias of Object.keys(spend)) expect(spend[alias], alias).to.be.closeTo(perCall(chars), 1e-12);
  });

  it("countTokens, the model list and one model answer in Google's shapes", async () => {
    const { ai } = await client();
    const counted = await ai.models.countTokens({ model: 'tg/gemini-direct', contents: QUESTION });
    expect(counted.totalTokens).to.equal(Math.ceil(QUESTION.length / 4));
    const estimated = await ai.models.countTokens({ model: 'tg/gpt-direct', contents: QUESTION });
    expect(estimated.totalTokens).to.be.a('number').and.greaterThan(0);
    const v1beta = new GoogleGenAI({
      apiKey: (await client()).key.secret,
      httpOptions: { baseUrl: `${dp.proxy.url}/${base.slug}`, apiVersion: 'v1beta' },
    });
    const names = (await v1beta.models.list()).page.map((m) => m.name);
    expect(names).to.have.members(['models/tg/gemini-direct', 'models/tg/gpt-direct', 'models/tg/claude-direct', 'models/tg/gpt-responses']);
    const one = await v1beta.models.get({ model: 'tg/gemini-direct' });
    expect(one).to.include({ name: 'models/tg/gemini-direct', outputTokenLimit: 65536 });
  });

  it('takes the key as ?key= and streams one JSON array without alt=sse', async () => {
    const { key } = await client();
    const res = await fetch(`${dp.proxy.url}/${key.slug}/v1beta/models/tg/gpt-direct:streamGenerateContent?key=${key.secret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: QUESTION }] }] }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json');
    const chunks = (await res.json()) as Array<{ candidates: Array<{ content: { parts: Array<{ text?: string }> }; finishReason?: string }> }>;
    expect(chunks.flatMap((c) => c.candidates[0]!.content.parts.map((p) => p.text ?? '')).join('')).to.match(/^tok1 .* tok12$/);
    expect(chunks.at(-1)!.candidates[0]!.finishReason).to.equal('STOP');
  });

  it("refuses a call without a key in Google's error shape", async () => {
    const res = await fetch(`${dp.proxy.url}/${base.slug}/v1beta/models/tg/gemini-direct:generateContent`, {
      method: 'POST',
      body: '{"contents":[]}',
    });
    expect(res.status).to.equal(401);
    expect(((await res.json()) as { error: Record<string, unknown> }).error).to.include({ code: 401, status: 'UNAUTHENTICATED' });
  });

  it("refuses two different keys (x-goog-api-key and a Bearer token): which to bill is not the proxy's to guess", async () => {
    const { key } = await client();
    const other = await client();
    const res = await fetch(`${dp.proxy.url}/${key.slug}/v1beta/models/tg/gemini-direct:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key.secret, authorization: `Bearer ${other.key.secret}` },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: QUESTION }] }] }),
    });
    expect(res.status).to.equal(401);
  });
});
