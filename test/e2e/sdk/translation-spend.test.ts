import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, type ConverseCommandInput } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedAnotherKey, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

const SYSTEM = 'You answer questions about the weather.';
const QUESTION = 'What is the weather in Paris today?';
const CITY = { city: 'Paris' };
const RESULT = 'Sunny, 21 degrees.';
const TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};

/** One conversation (system, question, a tool call and its result), said in Chat Completions. */
function chatCall(model: string): OpenAI.ChatCompletionCreateParamsNonStreaming & { stream?: undefined } {
  return {
    model,
    max_tokens: 100,
    tools: [{ type: 'function', function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema } }],
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: QUESTION },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: TOOL.name, arguments: JSON.stringify(CITY) } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: RESULT },
    ],
  };
}

/** The same conversation said in Messages. */
function messagesCall(model: string): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model,
    max_tokens: 100,
    system: SYSTEM,
    tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }],
    messages: [
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: TOOL.name, input: CITY }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: RESULT }] },
    ],
  };
}

/** The same conversation said in the Responses API. */
function responsesCall(model: string): OpenAI.Responses.ResponseCreateParamsNonStreaming & { stream?: undefined } {
  return {
    model,
    max_output_tokens: 100,
    instructions: SYSTEM,
    tools: [{ type: 'function', name: TOOL.name, description: TOOL.description, parameters: TOOL.schema, strict: false }],
    input: [
      { role: 'user', content: QUESTION },
      { type: 'function_call', call_id: 'call_1', name: TOOL.name, arguments: JSON.stringify(CITY) },
      { type: 'function_call_output', call_id: 'call_1', output: RESULT },
    ],
  };
}

/** The same conversation said in Bedrock's Converse API. */
function converseCall(modelId: string): ConverseCommandInput {
  return {
    modelId,
    inferenceConfig: { maxTokens: 100 },
    system: [{ text: SYSTEM }],
    toolConfig: { tools: [{ toolSpec: { name: TOOL.name, description: TOOL.description, inputSchema: { json: TOOL.schema } } }] },
    messages: [
      { role: 'user', content: [{ text: QUESTION }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_1', name: TOOL.name, input: CITY } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: RESULT }] } }] },
    ],
  };
}

/**
 * Metering reads usage in the provider's format and prices it by the alias,
 * so the same conversation costs the same whichever format the client spoke
 * and whichever the provider did: all nine client×provider combinations of
 * the OpenAI and Anthropic formats, and those three clients on a Gemini
 * provider (a Gemini client on each provider: test/e2e/gemini/genai-sdk.test.ts), and
 * Bedrock's Converse (the AWS SDK on the workspace's Bedrock route) on a Chat
 * and a Messages provider. Each
 * gets its own key; the aliases are priced alike ($3 / $15 per Mtok).
 */
describeEachStore('translation: spend is identical across client and provider formats', (store) => {
  let dp: DataPlane;
  let base: SeededKey;

  before(async () => {
    dp = await startDataPlane(store);
    base = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/claude-direct', 'tg/gpt-direct', 'tg/gpt-responses', 'tg/gemini-direct'] });
  });
  after(() => dp.close());

  async function openaiKey(): Promise<{ key: SeededKey; client: OpenAI }> {
    const key = await seedAnotherKey(dp.cp.deps, base);
    return { key, client: new OpenAI({ apiKey: key.secret, baseURL: `${dp.proxy.url}/${key.slug}/v1`, maxRetries: 0 }) };
  }
  async function anthropicKey(): Promise<{ key: SeededKey; client: Anthropic }> {
    const key = await seedAnotherKey(dp.cp.deps, base);
    return { key, client: new Anthropic({ apiKey: key.secret, baseURL: `${dp.proxy.url}/${key.slug}/anthropic`, maxRetries: 0 }) };
  }

  /** One whole and one streamed Converse call of the conversation through the AWS SDK. */
  async function converseOn(modelId: string): Promise<SeededKey> {
    const key = await seedAnotherKey(dp.cp.deps, base);
    const client = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: `${dp.proxy.url}/${key.slug}/bedrock`,
      token: { token: key.secret },
      authSchemePreference: ['httpBearerAuth'],
      maxAttempts: 1,
    });
    await client.send(new ConverseCommand(converseCall(modelId)));
    const streamed = await client.send(new ConverseStreamCommand(converseCall(modelId)));
    for await (const _event of streamed.stream!) {
      /* read to its end */
    }
    client.destroy();
    return key;
  }

  /** One streamed and one non-streamed call of the conversation; the key's spend after both. */
  const combinations: Record<string, () => Promise<SeededKey>> = {
    'chat client → chat provider (pass-through)': async () => {
      const { key, client } = await openaiKey();
      await client.chat.completions.create(chatCall('tg/sonnet'));
      await client.chat.completions.stream(chatCall('tg/sonnet')).finalChatCompletion();
      return key;
    },
    'chat client → messages provider (translated)': async () => {
      const { key, client } = await openaiKey();
      await client.chat.completions.create(chatCall('tg/claude-direct'));
      await client.chat.completions.stream(chatCall('tg/claude-direct')).finalChatCompletion();
      return key;
    },
    'messages client → messages provider (pass-through)': async () => {
      const { key, client } = await anthropicKey();
      await client.messages.create(messagesCall('tg/sonnet'));
      await client.messages.stream(messagesCall('tg/sonnet')).finalMessage();
      return key;
    },
    'messages client → chat provider (translated)': async () => {
      const { key, client } = await anthropicKey();
      await client.messages.create(messagesCall('tg/gpt-direct'));
      await client.messages.stream(messagesCall('tg/gpt-direct')).finalMessage();
      return key;
    },
    'responses client → responses provider (pass-through)': async () => responsesOn('tg/gpt-responses'),
    'responses client → chat provider (translated)': async () => responsesOn('tg/gpt-direct'),
    'responses client → messages provider (translated through Chat)': async () => responsesOn('tg/claude-direct'),
    'chat client → responses provider (translated)': async () => {
      const { key, client } = await openaiKey();
      await client.chat.completions.create(chatCall('tg/gpt-responses'));
      await client.chat.completions.stream(chatCall('tg/gpt-responses')).finalChatCompletion();
      return key;
    },
    'chat client → gemini provider (translated)': async () => {
      const { key, client } = await openaiKey();
      await client.chat.completions.create(chatCall('tg/gemini-direct'));
      await client.chat.completions.stream(chatCall('tg/gemini-direct')).finalChatCompletion();
      return key;
    },
    'messages client → gemini provider (translated through Chat)': async () => {
      const { key, client } = await anthropicKey();
      await client.messages.create(messagesCall('tg/gemini-direct'));
      await client.messages.stream(messagesCall('tg/gemini-direct')).finalMessage();
      return key;
    },
    'responses client → gemini provider (translated through Chat)': async () => responsesOn('tg/gemini-direct'),
    'converse client → chat provider (through Chat)': async () => converseOn('tg/gpt-direct'),
    'converse client → messages provider (through Chat)': async () => converseOn('tg/claude-direct'),
    'messages client → responses provider (translated through Chat)': async () => {
      const { key, client } = await anthropicKey();
      await client.messages.create(messagesCall('tg/gpt-responses'));
      await client.messages.stream(messagesCall('tg/gpt-responses')).finalMessage();
      return key;
    },
  };

  async function responsesOn(model: string): Promise<SeededKey> {
    const { key, client } = await openaiKey();
    await client.responses.create(responsesCall(model));
    await client.responses.stream(responsesCall(model)).finalResponse();
    return key;
  }

  it('every combination is billed the same amount for the same conversation', async () => {
    const spend: Record<string, number> = {};
    for (const [name, run] of Object.entries(combinations)) {
      const key = await run();
      await dp.proxy.drain();
      spend[name] = (await moneyOf(dp.cp.deps, key)).spend;
    }
    const chars =
      SYSTEM.length +
      QUESTION.length +
      TOOL.name.length +
      JSON.stringify(CITY).length +
      RESULT.length +
      TOOL.name.length +
      TOOL.description.length +
      JSON.stringify(TOOL.schema.properties).length;
    const perCall = (Math.ceil(chars / 4) * 3 + 12 * 15) / 1e6;
    for (const name of Object.keys(combinations)) expect(spend[name], name).to.be.closeTo(2 * perCall, 1e-12);
  });
});
