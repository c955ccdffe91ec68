import { expect } from 'chai';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ContentBlock,
  type Message,
  type TokenUsage,
  type ToolConfiguration,
  type ToolUseBlock,
} from '@aws-sdk/client-bedrock-runtime';
import type { RunningProxy } from '../../../proxy/runtime.js';
import type { FakeBedrock } from '../../support/fake-bedrock/index.js';
import { PROXY_AWS_IDENTITY, startBedrockPlane, type BedrockPlane } from '../../support/bedrock-plane.js';
import { moneyOf, seedAnotherKey, seedKey, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { describeEachStore } from '../../support/stores.js';

const WEATHER: ToolConfiguration = {
  tools: [
    {
      toolSpec: {
        name: 'get_weather',
        description: 'The weather in a city',
        inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      },
    },
  ],
};

/** Each alias's prices in USD per million tokens: input, output, cache read, cache write. */
const PRICES: Record<string, [number, number, number, number]> = {
  'tg/gpt-direct': [3, 15, 3, 0],
  'tg/claude-direct': [3, 15, 0.3, 3.75],
  'tg/gpt-responses': [3, 15, 3, 3],
  'tg/gemini-direct': [3, 15, 0.3, 3],
  'tg/bedrock-claude': [3, 15, 0.3, 3.75],
  'tg/nova': [0.8, 3.2, 0.2, 1],
};

/** The providers behind the aliases, each of another format. */
const PROVIDERS: [alias: string, provider: string][] = [
  ['tg/gpt-direct', 'a Chat provider'],
  ['tg/claude-direct', 'a Messages provider'],
  ['tg/gpt-responses', 'a Responses provider'],
  ['tg/gemini-direct', 'a Gemini provider'],
  ['tg/bedrock-claude', 'a Bedrock provider (Claude through InvokeModel)'],
  ['tg/nova', 'a Bedrock provider (Nova through Converse)'],
];

/** One Converse turn as the client reads it, streamed or whole. */
interface Turn {
  content: ContentBlock[];
  stopReason: string | undefined;
  usage: TokenUsage | undefined;
}

async function converse(client: BedrockRuntimeClient, modelId: string, messages: Message[], stream: boolean): Promise<Turn> {
  const input = { modelId, messages, toolConfig: WEATHER, inferenceConfig: { maxTokens: 200 } };
  if (!stream) {
    const out = await client.send(new ConverseCommand(input));
    return { content: out.output?.message?.content ?? [], stopReason: out.stopReason, usage: out.usage };
  }
  const out = await client.send(new ConverseStreamCommand(input));
  const blocks: { text?: string; toolUseId?: string; name?: string; input?: string }[] = [];
  const turn: Turn = { content: [], stopReason: undefined, usage: undefined };
  for await (const event of out.stream!) {
    if (event.contentBlockStart?.start?.toolUse) {
      const { toolUseId, name } = event.contentBlockStart.start.toolUse;
      blocks[event.contentBlockStart.contentBlockIndex!] = { toolUseId, name, input: '' };
    }
    if (event.contentBlockDelta) {
      const block = (blocks[event.contentBlockDelta.contentBlockIndex!] ??= {});
      const delta = event.contentBlockDelta.delta!;
      if (delta.text !== undefined) block.text = (block.text ?? '') + delta.text;
      if (delta.toolUse?.input !== undefined) block.input += delta.toolUse.input;
    }
    if (event.messageStop) turn.stopReason = event.messageStop.stopReason;
    if (event.metadata) turn.usage = event.metadata.usage;
  }
  turn.content = blocks.map((b): ContentBlock =>
    b.toolUseId === undefined
      ? { text: b.text ?? '' }
      : { toolUse: { toolUseId: b.toolUseId, name: b.name, input: JSON.parse(b.input || '{}') as ToolUseBlock['input'] } },
  );
  return turn;
}

function costOf(alias: string, u: TokenUsage): number {
  const [input, output, read, write] = PRICES[alias]!;
  return (
    ((u.inputTokens ?? 0) * input + (u.outputTokens ?? 0) * output + (u.cacheReadInputTokens ?? 0) * read + (u.cacheWriteInputTokens ?? 0) * write) /
    1e6
  );
}

/**
 * Converse as a client format: the official AWS SDK, unchanged, with
 * Tollgate's key as its Bedrock API key (`Authorization: Bearer`) and its
 * endpoint `/{ws}/bedrock`, makes a tool round trip with ConverseCommand and
 * ConverseStreamCommand on providers of every kind, answered as Bedrock
 * answers (the stream in the binary event stream) and billed on the key
 * what the provider's usage costs.
 */
describeEachStore('proxy: Bedrock Converse as a client format', (store) => {
  let plane: BedrockPlane | undefined;
  let dp: DataPlane;
  let fake: FakeBedrock;
  let proxy: RunningProxy;
  let base: SeededKey;

  before(async function () {
    this.timeout(30_000);
    const priced = (alias: string) => {
      const [input, output, read, write] = PRICES[alias]!;
      return { input_usd_per_mtok: input, output_usd_per_mtok: output, cache_read_usd_per_mtok: read, cache_write_usd_per_mtok: write };
    };
    plane = await startBedrockPlane(store, [
      {
        alias: 'tg/bedrock-claude',
        provider: 'bedrock',
        upstream_model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
        max_output_tokens: 5000,
        ...priced('tg/bedrock-claude'),
      },
      { alias: 'tg/nova', provider: 'bedrock', upstream_model: 'amazon.nova-pro-v1:0', max_output_tokens: 5000, ...priced('tg/nova') },
    ]);
    ({ dp, fake, proxy } = plane);
    base = await seedKey(dp.cp.deps, { models: PROVIDERS.map(([alias]) => alias) });
  });
  after(() => plane?.close());

  function clientFor(key: SeededKey, secret = key.secret): BedrockRuntimeClient {
    return new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: `${proxy.url}/${key.slug}/bedrock`,
      token: { token: secret },
      authSchemePreference: ['httpBearerAuth'],
      maxAttempts: 1,
    });
  }

  /** The key's usage rows: the format the usage report names, and the amount. */
  async function ledgerRows(keyId: string): Promise<{ format: string; usd: number }[]> {
    await proxy.drain();
    return store.db.query<{ format: string; usd: number }>(
      `SELECT format, abs(amount_usd)::float8 AS usd FROM ledger_entries WHERE key_id = $1 AND kind = 'usage' ORDER BY created_at`,
      [keyId],
    );
  }

  for (const [alias, provider] of PROVIDERS)
    for (const stream of [false, true])
      it(`makes a tool round trip${stream ? ', streamed,' : ''} on ${provider}, billed on the key what its usage costs`, async () => {
        const key = await seedAnotherKey(dp.cp.deps, base);
        const client = clientFor(key);
        const messages: Message[] = [{ role: 'user', content: [{ text: 'What is the weather in Paris?' }] }];
        const first = await converse(client, alias, messages, stream);
        expect(first.stopReason).to.equal('tool_use');
        const use = first.content.find((b) => b.toolUse !== undefined)?.toolUse;
        expect(use?.name).to.equal('get_weather');
        expect(use?.toolUseId).to.be.a('string').and.not.equal('');
        messages.push(
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ toolResult: { toolUseId: use!.toolUseId!, content: [{ text: 'Sunny, 21 °C' }] } }] },
        );
        const second = await converse(client, alias, messages, stream);
        client.destroy();
        expect(second.stopReason).to.equal('end_turn');
        expect(second.content.map((b) => b.text ?? '').join('')).to.match(/tok1/);
        for (const turn of [first, second]) {
          const u = turn.usage!;
          expect(u.outputTokens).to.be.above(0);
          expect(u.totalTokens).to.equal(u.inputTokens! + u.outputTokens! + (u.cacheReadInputTokens ?? 0) + (u.cacheWriteInputTokens ?? 0));
        }
        // The route is a Chat call in Bedrock's framing, as InvokeModel's is a Messages call: its usage is reported as Chat's.
        const rows = await ledgerRows(key.keyId);
        expect(rows.map((r) => r.format)).to.deep.equal(['chat', 'chat']);
        // Both calls may settle in one batch, at one instant: compared as a set.
        const billed = rows.map((r) => r.usd).sort();
        const costs = [costOf(alias, first.usage!), costOf(alias, second.usage!)].sort();
        billed.forEach((usd, i) => expect(usd).to.be.closeTo(costs[i]!, 1e-12));
        expect((await moneyOf(dp.cp.deps, key)).spend).to.be.closeTo(costOf(alias, first.usage!) + costOf(alias, second.usage!), 1e-12);
      });

  it('names what Chat cannot carry in x-tollgate-dropped, and refuses a guardrail as Bedrock refuses a bad request', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const call = (body: unknown) =>
      fetch(`${proxy.url}/${key.slug}/bedrock/model/tg%2Fgpt-direct/converse`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const messages = [{ role: 'user', content: [{ text: 'hi' }, { cachePoint: { type: 'default' } }] }];
    const answer = await call({ messages, requestMetadata: { team: 'search' } });
    expect(answer.status).to.equal(200);
    expect(((await answer.json()) as { stopReason: string }).stopReason).to.equal('end_turn');
    expect(answer.headers.get('x-tollgate-dropped')).to.equal('requestMetadata,cachePoint');
    const refused = await call({ messages, guardrailConfig: { guardrailIdentifier: 'g', guardrailVersion: '1' } });
    expect(refused.status).to.equal(400);
    expect(refused.headers.get('x-amzn-errortype')).to.equal('ValidationException');
    expect(((await refused.json()) as { message: string }).message).to.match(/^guardrailConfig: /);
  });

  it('raises the exception Bedrock would: a wrong key, a SigV4 signature, an unknown model, a provider’s throttling and unavailability', async () => {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const failure = async (client: BedrockRuntimeClient, modelId: string, stream = false) => {
      const input = { modelId, messages: [{ role: 'user' as const, content: [{ text: 'hi' }] }] };
      const sent = stream ? client.send(new ConverseStreamCommand(input)) : client.send(new ConverseCommand(input));
      const err = (await sent.catch((e: unknown) => e)) as Error & {
        $metadata: { httpStatusCode: number };
      };
      client.destroy();
      return [err.name, err.$metadata.httpStatusCode, err.message];
    };
    expect((await failure(clientFor(key, 'tg_not-a-key'), 'tg/gpt-direct')).slice(0, 2)).to.deep.equal(['AccessDeniedException', 401]);
    // A SigV4-signed call carries no Tollgate key: Tollgate signs its own calls to Bedrock, and the caller's AWS identity means nothing to it.
    const signing = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: `${proxy.url}/${key.slug}/bedrock`,
      credentials: PROXY_AWS_IDENTITY,
      maxAttempts: 1,
    });
    expect((await failure(signing, 'tg/gpt-direct')).slice(0, 2)).to.deep.equal(['AccessDeniedException', 401]);
    expect((await failure(clientFor(key), 'tg/no-such-model')).slice(0, 2)).to.deep.equal(['ResourceNotFoundException', 404]);
    dp.fake.enqueue({
      kind: 'error',
      status: 429,
      body: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    expect(await failure(clientFor(key), 'tg/gpt-direct', true)).to.deep.equal(['ThrottlingException', 429, 'Rate limit reached for requests']);
    fake.enqueue({ kind: 'error', status: 503, type: 'ServiceUnavailableException', message: 'Bedrock is unavailable.' });
    const [name, status] = await failure(clientFor(key), 'tg/nova');
    expect([name, status]).to.deep.equal(['ServiceUnavailableException', 503]);
  });
});
