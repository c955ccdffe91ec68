import OpenAI from 'openai';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { PROVIDER_KINDS } from './kinds.js';

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/**
 * The official openai client, unchanged, on `/v1/responses`: created and
 * streamed, with a whole function-tool round trip, on a provider that
 * speaks Responses (passed through), one that speaks only Chat and one that
 * speaks only Messages (both translated, the latter through Chat).
 */
describeEachStore('Responses API: the openai SDK on every provider kind', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let client: OpenAI;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: PROVIDER_KINDS.map((p) => p.model) });
    client = new OpenAI({ apiKey: k.secret, baseURL: `${dp.proxy.url}/${k.slug}/v1`, maxRetries: 0 });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const { kind, model, path, answerModel } of PROVIDER_KINDS) {
    describe(kind, () => {
      it('responses.create answers in text with usage; the provider got its own format', async () => {
        const r = await client.responses.create({ model, input: 'Say hello.', instructions: 'Be brief.' });
        expect(r.object).to.equal('response');
        expect(r.status).to.equal('completed');
        expect(r.model).to.equal(answerModel);
        expect(r.output_text).to.match(/^tok1 tok2/);
        expect(r.usage!.input_tokens).to.be.greaterThan(0);
        expect(r.usage!.output_tokens).to.be.greaterThan(0);
        expect(dp.fake.requests.at(-1)!.path).to.equal(path);
      });

      it('responses.create streamed: response.* events in order with sequence numbers, then completed', async () => {
        const stream = await client.responses.create({ model, input: 'Say hello.', stream: true });
        const types: string[] = [];
        const seqs: number[] = [];
        let text = '';
        let completed: OpenAI.Responses.Response | undefined;
        for await (const e of stream) {
          types.push(e.type);
          seqs.push(e.sequence_number);
          if (e.type === 'response.output_text.delta') text += e.delta;
          if (e.type === 'response.completed') completed = e.response;
        }
        expect(types[0]).to.equal('response.created');
        expect(types.at(-1)).to.equal('response.completed');
        expect(types).to.include.members(['response.output_item.added', 'response.output_text.delta', 'response.output_item.done']);
        expect(seqs).to.deep.equal(seqs.map((_, i) => seqs[0]! + i));
        expect(text).to.match(/^tok1 tok2/);
        expect(completed!.usage!.output_tokens).to.be.greaterThan(0);
      });

      it('responses.stream with a function tool: the call, its output sent back, the answer in text', async () => {
        const stream = client.responses.stream({ model, input: 'Weather in Paris?', tools: [weather] });
        const first = await stream.finalResponse();
        const call = first.output.find((i) => i.type === 'function_call');
        expect(call, JSON.stringify(first.output)).to.not.equal(undefined);
        if (call?.type !== 'function_call') throw new Error('no function call');
        expect(call.name).to.equal('get_weather');
        expect(JSON.parse(call.arguments)).to.have.property('city');
        // The second turn, sent once whole and once streamed: the call and its output.
        const turn: OpenAI.Responses.ResponseInput = [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 °C' },
        ];
        const second = await client.responses.create({
          model,
          tools: [weather],
          input: turn,
        });
        expect(second.output_text).to.match(/^tok1/);
        const streamed = client.responses.stream({
          model,
          tools: [weather],
          input: turn,
        });
        expect((await streamed.finalResponse()).output_text).to.match(/^tok1/);
      });
    });
  }
});
