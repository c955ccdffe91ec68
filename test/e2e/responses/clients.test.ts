import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import OpenAI from 'openai';
import { expect } from 'chai';
import { z } from 'zod';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { PROVIDER_KINDS } from './kinds.js';
import { runCodexExec } from './codex.js';

/**
 * The clients that speak the Responses API by default, unchanged, with only
 * their base URL (and the model, an alias) set: the AI SDK's default OpenAI
 * provider, the Agents SDK's default model, and `codex exec`. Each on the
 * three provider kinds. On PostgreSQL one client per provider kind (the
 * store only changes the money around the call, which the openai SDK suite
 * covers on both stores), to keep the suite's time reasonable.
 */
describeEachStore('Responses API: the AI SDK, the Agents SDK and Codex on every provider kind', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let base: string;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: PROVIDER_KINDS.map((p) => p.model) });
    base = `${dp.proxy.url}/${k.slug}/v1`;
    setTracingDisabled(true);
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  const full = store.name === 'pglite';

  for (const [i, { kind, model, path }] of PROVIDER_KINDS.entries()) {
    describe(kind, () => {
      if (full || i === 0)
        it('AI SDK generateText and streamText with the default provider (Responses), a tool round trip', async function () {
          const openai = createOpenAI({ baseURL: base, apiKey: k.secret });
          const plain = await generateText({ model: openai(model), prompt: 'Say hi.' });
          expect(plain.text).to.match(/^tok1/);
          expect(plain.usage.outputTokens).to.be.greaterThan(0);
          const weather = aiTool({
            description: 'Weather for a city',
            inputSchema: z.object({ city: z.string() }),
            execute: ({ city }) => Promise.resolve(`sunny in ${city}`),
          });
          const withTool = await generateText({ model: openai(model), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
          expect(withTool.steps.length).to.equal(2);
          expect(withTool.text).to.match(/^tok1/);
          const streamed = streamText({ model: openai(model), prompt: 'Say hi.' });
          expect(await streamed.text).to.match(/^tok1/);
          expect((await streamed.usage).outputTokens).to.be.greaterThan(0);
          expect(dp.fake.requests.every((r) => r.path === path)).to.equal(true);
        });

      if (full || i === 1)
        it('Agents SDK default model (the OpenAI Responses model) with a function tool, run and streamed', async () => {
          // The default provider (the OpenAI Responses model), given this suite's client: the process-wide default would keep the first suite's.
          const runner = new Runner({
            modelProvider: new OpenAIProvider({ openAIClient: new OpenAI({ baseURL: base, apiKey: k.secret, maxRetries: 0 }) }),
          });
          const weather = tool({
            name: 'get_weather',
            description: 'The weather in a city.',
            parameters: z.object({ city: z.string() }),
            execute: ({ city }) => `sunny in ${city}`,
          });
          const agent = new Agent({ name: 'e2e', instructions: 'Answer briefly.', model, tools: [weather] });
          const result = await runner.run(agent, 'Weather in Paris?');
          expect(result.finalOutput).to.match(/^tok1/);
          const streamed = await runner.run(agent, 'Weather in Paris?', { stream: true });
          await streamed.completed;
          expect(streamed.finalOutput).to.match(/^tok1/);
          // Each run: the tool call, then the answer once its output came back.
          expect(dp.fake.requests).to.have.length(4);
          expect(dp.fake.requests.every((r) => r.path === path)).to.equal(true);
        });

      if (full || i === 2)
        it('codex exec completes a prompt (one streamed /v1/responses call)', async function () {
          this.timeout(120_000);
          dp.fake.enqueue({ kind: 'ok', outputTokens: 3, textOnly: true });
          const out = await runCodexExec(base, k.secret, model, 'say hi');
          expect(out.exit, out.stderr).to.equal(0);
          expect(out.stdout).to.include('tok1 tok2 tok3');
          expect(dp.fake.requests).to.have.length(1);
          expect(dp.fake.requests[0]!.path).to.equal(path);
        });
    });
  }

  it('codex exec naming a model Codex knows, which a client name maps to the alias: no "model metadata not found" warning, billed as the alias', async function () {
    this.timeout(200_000);
    // The test models file gives tg/gpt-responses `client_names: ["gpt-5.5*"]`; Codex has metadata for gpt-5.5 and none for tg/….
    const WARNING = /Model metadata for `[^`]+` not found/;
    dp.fake.enqueue({ kind: 'ok', outputTokens: 3, textOnly: true });
    const byAlias = await runCodexExec(base, k.secret, 'tg/gpt-responses', 'say hi');
    expect(byAlias.exit, byAlias.stderr).to.equal(0);
    expect(`${byAlias.stdout}${byAlias.stderr}`).to.match(WARNING);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 3, textOnly: true });
    const byName = await runCodexExec(base, k.secret, 'gpt-5.5', 'say hi');
    expect(byName.exit, byName.stderr).to.equal(0);
    expect(byName.stdout).to.include('tok1 tok2 tok3');
    expect(`${byName.stdout}${byName.stderr}`).to.not.match(WARNING);
    expect((dp.fake.requests.at(-1)!.body as { model: string }).model).to.equal('gpt-5');
    await dp.proxy.drain();
    const models = await dp.cp.deps.db.query<{ model: string }>(`SELECT DISTINCT model FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`, [
      k.keyId,
    ]);
    expect(models.map((r) => r.model))
      .to.include('tg/gpt-responses')
      .and.not.include('gpt-5.5');
  });
});
