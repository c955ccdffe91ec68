import { expect } from 'chai';
import { converseRequest } from '../../../../../proxy/wire/bedrock/converse-request.js';
import { chatFromConverse, createConverseJsonDecoder, createConverseStreamDecoder } from '../../../../../proxy/wire/bedrock/converse-answer.js';
import { isConverseModel } from '../../../../../proxy/wire/bedrock/converse-model.js';
import { createEventStreamWriter, MalformedEventStream } from '../../../../../proxy/wire/bedrock/event-stream.js';
import { createUsageTap } from '../../../../../proxy/wire/usage-tap.js';
import type { ModelConfig, ProviderConfig } from '../../../../../shared/models.js';

const writer = createEventStreamWriter();
const event = (type: string, payload: unknown) =>
  writer.message({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));

describe('Bedrock Converse mappings', () => {
  it('choose Converse for every model of a Bedrock provider but Anthropic’s, inference profiles and ARNs included', () => {
    const bedrock = { bedrock: { region: 'us-east-1' } } as ProviderConfig;
    const plain = { bedrock: undefined } as ProviderConfig;
    const model = (upstream_model: string) => ({ upstream_model }) as ModelConfig;
    expect(isConverseModel(bedrock, model('amazon.nova-pro-v1:0'))).to.equal(true);
    expect(isConverseModel(bedrock, model('meta.llama3-3-70b-instruct-v1:0'))).to.equal(true);
    expect(isConverseModel(bedrock, model('us.anthropic.claude-sonnet-4-5-20250929-v1:0'))).to.equal(false);
    expect(isConverseModel(bedrock, model('anthropic.claude-haiku-4-5-20251001-v1:0'))).to.equal(false);
    expect(isConverseModel(bedrock, model('arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-x'))).to.equal(false);
    expect(isConverseModel(plain, model('amazon.nova-pro-v1:0'))).to.equal(false);
  });

  it('turn a Chat request into Converse: system, joined turns, tool calls and results, tools, sampling', () => {
    const out = converseRequest({
      model: 'm',
      max_completion_tokens: 64,
      temperature: 0.2,
      top_p: 0.8,
      stop: 'STOP',
      tool_choice: { type: 'function', function: { name: 'f' } },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'a' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 't1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
            { id: 't2', type: 'function', function: { name: 'f', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: 'r1' },
        { role: 'tool', tool_call_id: 't2', content: 'r2' },
        { role: 'user', content: 'more' },
      ],
    });
    expect(out).to.deep.equal({
      system: [{ text: 'sys' }],
      messages: [
        { role: 'user', content: [{ text: 'a' }] },
        {
          role: 'assistant',
          content: [{ toolUse: { toolUseId: 't1', name: 'f', input: { x: 1 } } }, { toolUse: { toolUseId: 't2', name: 'f', input: {} } }],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 't1', content: [{ text: 'r1' }] } },
            { toolResult: { toolUseId: 't2', content: [{ text: 'r2' }] } },
            { text: 'more' },
          ],
        },
      ],
      inferenceConfig: { maxTokens: 64, temperature: 0.2, topP: 0.8, stopSequences: ['STOP'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }],
        toolChoice: { tool: { name: 'f' } },
      },
    });
  });

  it('leave the tools out when the Chat request says tool_choice none', () => {
    const out = converseRequest({
      messages: [{ role: 'user', content: 'x' }],
      tool_choice: 'none',
      tools: [{ type: 'function', function: { name: 'f' } }],
    });
    expect(out).not.to.have.property('toolConfig');
  });

  it('turn a whole Converse answer into a Chat completion whose usage bills reads and writes apart', () => {
    const chat = chatFromConverse(
      {
        output: { message: { role: 'assistant', content: [{ text: 'hi' }, { toolUse: { toolUseId: 't', name: 'f', input: { a: 1 } } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 4, cacheReadInputTokens: 100, cacheWriteInputTokens: 20, totalTokens: 134 },
      },
      'amazon.nova-pro-v1:0',
    );
    expect(chat.choices).to.deep.equal([
      {
        index: 0,
        message: { role: 'assistant', content: 'hi', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        finish_reason: 'tool_calls',
      },
    ]);
    const tap = createUsageTap('chat', false);
    tap.feed(Buffer.from(JSON.stringify(chat)));
    expect(tap.usage()).to.deep.include({ inputTokens: 10, cacheReadTokens: 100, cacheWrite5mTokens: 20, cacheWrite1hTokens: 0, outputTokens: 4 });
  });

  it('decode ConverseStream into Chat chunks, tool call arguments and usage included, split anywhere', () => {
    const bytes = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'lo' } }),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't', name: 'f' } } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"a":' } } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '1}' } } }),
      event('messageStop', { stopReason: 'tool_use' }),
      event('metadata', { usage: { inputTokens: 7, outputTokens: 3, cacheReadInputTokens: 50, cacheWriteInputTokens: 0 } }),
    ]);
    const decoder = createConverseStreamDecoder('m');
    let sse = '';
    for (let i = 0; i < bytes.length; i += 37) sse += decoder.push(bytes.subarray(i, i + 37));
    sse += decoder.end();
    const data = sse
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(data.at(-1)).to.equal('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: { delta: Record<string, unknown>; finish_reason: string | null }[] });
    expect(chunks.map((c) => (c.choices[0]?.delta.content as string | undefined) ?? '').join('')).to.equal('Hello');
    const args = chunks.flatMap((c) => (c.choices[0]?.delta.tool_calls as { function: { arguments: string } }[] | undefined) ?? []);
    expect(args.map((t) => t.function.arguments).join('')).to.equal('{"a":1}');
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).to.deep.equal(['tool_calls']);
    const tap = createUsageTap('chat', true);
    tap.feed(Buffer.from(sse));
    expect(tap.usage()).to.deep.include({ inputTokens: 7, cacheReadTokens: 50, outputTokens: 3 });
  });

  it('refuse a stream cut inside a message and a whole answer that is not JSON', () => {
    const stream = createConverseStreamDecoder('m');
    stream.push(event('messageStart', { role: 'assistant' }).subarray(0, 10));
    expect(() => stream.end()).to.throw(MalformedEventStream);
    const whole = createConverseJsonDecoder('m');
    whole.push(Buffer.from('{"output":'));
    expect(() => whole.end()).to.throw(MalformedEventStream);
  });
});
