import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { RunningProxy } from '../../../proxy/runtime.js';
import type { FakeBedrock } from '../../support/fake-bedrock/index.js';
import { startBedrockPlane, type BedrockPlane } from '../../support/bedrock-plane.js';
import { seedAnotherKey, seedKey, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { describeEachStore } from '../../support/stores.js';
import { edgeCall, ERROR_TYPES, errorType, FORMATS, modelBody } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';

/** Whether a format's error body is wrapped in `"type": "error"` (Anthropic's alone). */
const TYPE_WRAPPED: Record<WireFormat, boolean> = { chat: false, messages: true, responses: false, gemini: false };

const NOVA_ID = 'amazon.nova-pro-v1:0';

/** tg/nova's prices in picodollars per token (0.8, 3.2, 0.2 and 1 USD per million), set in the test's models file. */
const PRICE = { input: 800_000n, output: 3_200_000n, read: 200_000n, write: 1_000_000n };

function usdText(pico: bigint): string {
  const f = pico * 1000n;
  return `${f / 10n ** 15n}.${String(f % 10n ** 15n).padStart(15, '0')}`;
}

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/**
 * A non-Anthropic model on a Bedrock provider: called through Converse and
 * ConverseStream (translated through Chat), answered to the OpenAI and
 * Anthropic SDKs, and billed what Bedrock's usage says, cache reads and
 * writes included.
 */
describeEachStore('proxy: a Bedrock provider serving a model through Converse', (store) => {
  let plane: BedrockPlane | undefined;
  let dp: DataPlane;
  let fake: FakeBedrock;
  let proxy: RunningProxy;
  let base: SeededKey;

  before(async function () {
    this.timeout(30_000);
    plane = await startBedrockPlane(store, [
      {
        alias: 'tg/nova',
        provider: 'bedrock',
        upstream_model: NOVA_ID,
        input_usd_per_mtok: 0.8,
        output_usd_per_mtok: 3.2,
        cache_read_usd_per_mtok: 0.2,
        cache_write_usd_per_mtok: 1,
        max_output_tokens: 5000,
      },
    ]);
    ({ dp, fake, proxy } = plane);
    base = await seedKey(dp.cp.deps, { models: ['tg/nova'] });
  });
  after(() => plane?.close());

  /** The key's usage rows: the amount as the ledger's text, then input, output, cache reads, cache writes. */
  async function ledgerRows(keyId: string): Promise<[string, number, number, number, number][]> {
    await proxy.drain();
    const rows = await store.db.query<{ r: [string, number, number, number, number] }>(
      `SELECT json_build_array(abs(amount_usd)::text, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens) AS r
         FROM ledger_entries WHERE key_id = $1 AND kind = 'usage' ORDER BY created_at`,
      [keyId],
    );
    return rows.map((x) => x.r);
  }

  /** Converse's input count in the fake's reckoning: a quarter of every text block's characters. */
  function converseInput(body: Record<string, unknown>): number {
    let chars = 0;
    const blocks = [
      ...((body.system as { text?: string }[] | undefined) ?? []),
      ...(body.messages as { content: { text?: string }[] }[]).flatMap((m) => m.content),
    ];
    for (const b of blocks) if (typeof b.text === 'string') chars += b.text.length;
    return Math.max(1, Math.ceil(chars / 4));
  }

  function expectedRow(input: number, output: number, read: number, write: number): [string, number, number, number, number] {
    const pico = BigInt(input) * PRICE.input + BigInt(read) * PRICE.read + BigInt(write) * PRICE.write + BigInt(output) * PRICE.output;
    return [usdText(pico), input, output, read, write];
  }

  for (const stream of [false, true]) {
    it(`answers an OpenAI SDK chat${stream ? ', streamed,' : ''} through Converse and bills it to the femtodollar, cache included`, async () => {
      const key = await seedAnotherKey(dp.cp.deps, base);
      fake.enqueue({ kind: 'ok', outputTokens: 7, cacheReadTokens: 3_000, cacheWriteTokens: 400 });
      const client = new OpenAI({ baseURL: `${proxy.url}/${key.slug}/v1`, apiKey: key.secret, maxRetries: 0 });
      const request = {
        model: 'tg/nova',
        max_tokens: 50,
        temperature: 0.5,
        top_p: 0.9,
        stop: ['END'],
        messages: [
          { role: 'system' as const, content: 'Be brief.' },
          { role: 'user' as const, content: 'Say hello.' },
        ],
      };
      let text = '';
      if (stream) {
        const chunks = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
        for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
      } else {
        const answer = await client.chat.completions.create(request);
        text = answer.choices[0]!.message.content ?? '';
        expect(answer.choices[0]!.finish_reason).to.equal('stop');
        expect(answer.usage).to.deep.include({ completion_tokens: 7 });
      }
      expect(text).to.include('tok7');
      const sent = fake.requests.at(-1)!;
      expect(sent).to.deep.include({ operation: stream ? 'converse-stream' : 'converse', modelId: NOVA_ID, caller: 'AKIDTOLLGATE' });
      const body = sent.body as Record<string, unknown>;
      expect(body.system).to.deep.equal([{ text: 'Be brief.' }]);
      expect(body.messages).to.deep.equal([{ role: 'user', content: [{ text: 'Say hello.' }] }]);
      expect(body.inferenceConfig).to.deep.equal({ maxTokens: 50, temperature: 0.5, topP: 0.9, stopSequences: ['END'] });
      expect(await ledgerRows(key.keyId)).to.deep.equal([expectedRow(converseInput(body), 7, 3_000, 400)]);
    });

    it(`makes a tool round trip with the OpenAI SDK${stream ? ', streamed,' : ''}: toolUse out, toolResult back`, async () => {
      const key = await seedAnotherKey(dp.cp.deps, base);
      const client = new OpenAI({ baseURL: `${proxy.url}/${key.slug}/v1`, apiKey: key.secret, maxRetries: 0 });
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      let call: { id: string; name: string; args: string };
      if (stream) {
        const chunks = await client.chat.completions.create({ model: 'tg/nova', messages, tools: [WEATHER_TOOL], stream: true });
        const parts = { id: '', name: '', args: '' };
        let finish: string | null | undefined;
        for await (const chunk of chunks) {
          const c = chunk.choices[0];
          for (const t of c?.delta.tool_calls ?? []) {
            parts.id += t.id ?? '';
            parts.name += t.function?.name ?? '';
            parts.args += t.function?.arguments ?? '';
          }
          finish = c?.finish_reason ?? finish;
        }
        expect(finish).to.equal('tool_calls');
        call = parts;
      } else {
        const answer = await client.chat.completions.create({ model: 'tg/nova', messages, tools: [WEATHER_TOOL] });
        expect(answer.choices[0]!.finish_reason).to.equal('tool_calls');
        const t = answer.choices[0]!.message.tool_calls![0]!;
        if (t.type !== 'function') throw new Error('not a function call');
        call = { id: t.id, name: t.function.name, args: t.function.arguments };
      }
      expect(call).to.deep.equal({ id: 'tooluse_fake1', name: 'get_weather', args: '{"city":"Paris"}' });
      const tools = (fake.requests.at(-1)!.body as { toolConfig: unknown }).toolConfig;
      expect(tools).to.deep.equal({
        tools: [{ toolSpec: { name: 'get_weather', description: 'The weather in a city', inputSchema: { json: WEATHER_TOOL.function.parameters } } }],
      });
      messages.push(
        { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] },
        { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 °C' },
      );
      const final = await client.chat.completions.create({ model: 'tg/nova', messages, tools: [WEATHER_TOOL] });
      expect(final.choices[0]!.finish_reason).to.equal('stop');
      expect((fake.requests.at(-1)!.body as { messages: unknown }).messages).to.deep.equal([
        { role: 'user', content: [{ text: 'Weather in Paris?' }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_fake1', name: 'get_weather', input: { city: 'Paris' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_fake1', content: [{ text: 'Sunny, 21 °C' }] } }] },
      ]);
      expect(await ledgerRows(key.keyId)).to.have.length(2);
    });

    it(`answers the Anthropic SDK${stream ? ', streamed,' : ''} translated from Converse, billed exactly`, async () => {
      const key = await seedAnotherKey(dp.cp.deps, base);
      fake.enqueue({ kind: 'ok', outputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 60 });
      const client = new Anthropic({ baseURL: `${proxy.url}/${key.slug}/anthropic`, apiKey: key.secret, maxRetries: 0 });
      const request = { model: 'tg/nova', max_tokens: 40, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'Say hello.' }] };
      const answer = stream ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
      const text = answer.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      expect(text).to.include('tok5');
      expect(answer.stop_reason).to.equal('end_turn');
      const sent = fake.requests.at(-1)!;
      expect(sent.operation).to.equal(stream ? 'converse-stream' : 'converse');
      expect(await ledgerRows(key.keyId)).to.deep.equal([expectedRow(converseInput(sent.body as Record<string, unknown>), 5, 100, 60)]);
    });
  }

  it('answers a ThrottlingException from Converse as a 429 rate-limit error in each client’s format', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    for (const format of FORMATS) {
      fake.enqueue({ kind: 'error', status: 429, type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' });
      const answer = await edgeCall(proxy.url, format, key.slug, key.secret, modelBody(format, { model: 'tg/nova' }));
      expect(answer.status, answer.text).to.equal(429);
      expect(errorType(format, answer), answer.text).to.equal(ERROR_TYPES[429][format]);
      expect(answer.text).to.include('Too many requests, please wait');
      // Each format's own shape: only Anthropic's wraps the error in `"type": "error"`.
      expect(Object.hasOwn(JSON.parse(answer.text) as object, 'type')).to.equal(TYPE_WRAPPED[format]);
    }
  });
});
