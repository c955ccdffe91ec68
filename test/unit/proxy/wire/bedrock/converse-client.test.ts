import { expect } from 'chai';
import { route } from '../../../../../proxy/edge/route.js';
import { chatCallFromConverse } from '../../../../../proxy/wire/bedrock/converse-to-chat.js';
import { createConverseAnswerTranslator } from '../../../../../proxy/wire/bedrock/converse-stream-from-chat.js';
import { bedrockErrorType } from '../../../../../proxy/wire/bedrock/client-errors.js';
import { createEventStreamReader } from '../../../../../proxy/wire/bedrock/event-stream.js';
import { AppError } from '../../../../../shared/errors.js';

type Json = Record<string, unknown>;

function chatOf(body: unknown, stream = false): { chat: Json; dropped: string[] } {
  const out = chatCallFromConverse(Buffer.from(JSON.stringify(body)), 'tg/nova', stream);
  return { chat: JSON.parse(out.body.toString('utf8')) as Json, dropped: out.dropped };
}

function refusal(body: unknown): AppError {
  try {
    chatCallFromConverse(Buffer.from(JSON.stringify(body)), 'tg/nova', false);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
}

/** An event-stream answer's messages: each event's type and JSON payload, or an exception's type and message. */
function events(bytes: Buffer): [string, Json][] {
  const reader = createEventStreamReader();
  const out = reader
    .push(bytes)
    .map((m): [string, Json] => [
      m.headers[':event-type'] ?? `exception:${m.headers[':exception-type']}`,
      JSON.parse(Buffer.from(m.body).toString('utf8')) as Json,
    ]);
  reader.end();
  return out;
}

const sse = (chunks: unknown[]) => Buffer.from(chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join(''));
const chunk = (delta: Json, finish: string | null = null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('Converse as a client format', () => {
  it('routes converse and converse-stream under the Bedrock path as Chat calls, the model id unescaped', () => {
    expect(route('/ws/bedrock/model/amazon.nova-pro-v1%3A0/converse')).to.deep.equal({
      format: 'chat',
      slug: 'ws',
      action: 'call',
      alias: 'amazon.nova-pro-v1:0',
      bedrock: { stream: false, api: 'converse' },
    });
    expect(route('/ws/bedrock/model/tg%2Fsonnet/converse-stream')).to.deep.include({
      format: 'chat',
      alias: 'tg/sonnet',
      bedrock: { stream: true, api: 'converse' },
    });
    expect(route('/ws/bedrock/model/tg/invoke-with-response-stream')).to.deep.include({
      format: 'messages',
      bedrock: { stream: true, api: 'invoke' },
    });
    expect(route('/ws/bedrock/model/%E0%A4%A/converse')).to.equal(undefined);
  });

  it('turns a Converse request into Chat: system, images as data URLs, tool results before the user’s text, tools, choice and sampling', () => {
    const { chat, dropped } = chatOf(
      {
        system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }],
        messages: [
          { role: 'user', content: [{ text: 'Weather?' }, { image: { format: 'png', source: { bytes: 'iVBORw0=' } } }] },
          { role: 'assistant', content: [{ text: 'Checking.' }, { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } }] },
          {
            role: 'user',
            content: [
              { toolResult: { toolUseId: 't1', content: [{ json: { sky: 'clear' } }, { text: '!' }] } },
              { toolResult: { toolUseId: 't2', content: [{ text: 'no such city' }], status: 'error' } },
              { text: 'Thanks' },
            ],
          },
        ],
        inferenceConfig: { maxTokens: 64, temperature: 0.3, topP: 0.9, stopSequences: ['END'] },
        toolConfig: {
          tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object' } } } }],
          toolChoice: { tool: { name: 'get_weather' } },
        },
        requestMetadata: { team: 'a' },
        additionalModelRequestFields: { top_k: 5 },
      },
      true,
    );
    expect(chat).to.deep.equal({
      model: 'tg/nova',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: '{"sky":"clear"}!' },
        { role: 'tool', tool_call_id: 't2', content: 'Error: no such city' },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
      max_tokens: 64,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(dropped).to.deep.equal(['requestMetadata', 'additionalModelRequestFields', 'cachePoint']);
  });

  it('drops an assistant turn’s reasoning by name and maps any and auto tool choices', () => {
    const tools = [{ toolSpec: { name: 'f', inputSchema: { json: {} } } }];
    const { chat, dropped } = chatOf({
      messages: [
        { role: 'user', content: [{ text: 'a' }] },
        { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'hmm' } } }, { text: 'b' }] },
        { role: 'user', content: [{ text: 'c' }] },
      ],
      toolConfig: { tools, toolChoice: { any: {} } },
    });
    expect(chat.tool_choice).to.equal('required');
    expect((chat.messages as Json[])[1]).to.deep.equal({ role: 'assistant', content: 'b' });
    expect(dropped).to.deep.equal(['messages[reasoningContent]']);
    expect(
      chatOf({ messages: [{ role: 'user', content: [{ text: 'a' }] }], toolConfig: { tools, toolChoice: { auto: {} } } }).chat.tool_choice,
    ).to.equal('auto');
  });

  it('refuses what would change the answer if dropped: a guardrail, an S3 image, a document; and names a malformed field', () => {
    const user = (content: unknown[]) => ({ messages: [{ role: 'user', content }] });
    expect(refusal({ ...user([{ text: 'a' }]), guardrailConfig: { guardrailIdentifier: 'g', guardrailVersion: '1' } }).message).to.match(
      /^guardrailConfig: /,
    );
    expect(refusal(user([{ image: { format: 'png', source: { s3Location: { uri: 's3://b/k' } } } }])).message).to.match(
      /^messages\[0\]\.content\[0\]\.image\.source: /,
    );
    expect(refusal(user([{ document: { format: 'pdf', name: 'd', source: { bytes: 'AA==' } } }])).message).to.include('"document" block');
    const bad = refusal({ messages: [{ role: 'user', content: [{ toolUse: { toolUseId: 't', name: 3, input: {} } }] }] });
    expect(bad.kind).to.equal('invalid_input');
    expect(bad.message).to.match(/^messages\[0\]\.content\[0\]\.toolUse\.name: /);
    expect(refusal({ messages: [{ role: 'system', content: [] }] }).message).to.match(/^messages\[0\]\.role: /);
  });

  it('answers a whole Chat completion as Converse: text and tool uses, stop reason, usage split as Bedrock splits it, latency', () => {
    const t = createConverseAnswerTranslator();
    const completion = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'Sunny.',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 } },
    };
    const out = JSON.parse(t.json(Buffer.from(JSON.stringify(completion))).toString('utf8')) as Json;
    expect(out).to.deep.include({
      output: { message: { role: 'assistant', content: [{ text: 'Sunny.' }, { toolUse: { toolUseId: 'c1', name: 'f', input: { x: 1 } } }] } },
      stopReason: 'tool_use',
      usage: { inputTokens: 30, outputTokens: 7, totalTokens: 107, cacheReadInputTokens: 60, cacheWriteInputTokens: 10 },
    });
    expect((out.metrics as Json).latencyMs).to.be.a('number');
  });

  it('writes a Chat stream as ConverseStream events, JSON payloads named by :event-type, tool input in deltas, usage in metadata', () => {
    const t = createConverseAnswerTranslator();
    const bytes = sse([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
      { id: 'c1', choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } },
      '[DONE]',
    ]);
    // Fed in two-byte pieces: an event split anywhere comes out whole.
    const parts: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 2) parts.push(t.push(bytes.subarray(i, i + 2)));
    parts.push(t.end());
    const seen = events(Buffer.concat(parts));
    expect(seen.map(([type]) => type)).to.deep.equal([
      'messageStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'contentBlockStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(seen[1]![1]).to.deep.equal({ contentBlockIndex: 0, delta: { text: 'Hel' } });
    expect(seen[4]![1]).to.deep.equal({ contentBlockIndex: 1, start: { toolUse: { toolUseId: 'call_1', name: 'f' } } });
    expect(seen[6]![1]).to.deep.equal({ contentBlockIndex: 1, delta: { toolUse: { input: '1}' } } });
    expect(seen[8]![1]).to.deep.equal({ stopReason: 'tool_use' });
    expect(seen[9]![1].usage).to.deep.equal({ inputTokens: 12, outputTokens: 5, totalTokens: 17, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 });
  });

  it('ends a stream on an exception: the provider’s error chunk, a break, or an end before the finish', () => {
    const throttled = createConverseAnswerTranslator();
    const out = Buffer.concat([
      throttled.push(sse([chunk({ content: 'a' }), { error: { message: 'slow down', type: 'rate_limit_error' } }])),
      throttled.end(),
    ]);
    expect(events(out).at(-1)).to.deep.equal(['exception:throttlingException', { message: 'slow down' }]);
    const broken = createConverseAnswerTranslator();
    broken.push(sse([chunk({ content: 'a' })]));
    expect(events(broken.fail('The model provider broke off the answer.'))).to.deep.equal([
      ['exception:internalServerException', { message: 'The model provider broke off the answer.' }],
    ]);
    const short = createConverseAnswerTranslator();
    short.push(sse([chunk({ content: 'a' })]));
    expect(events(short.end())[0]![0]).to.equal('exception:modelStreamErrorException');
  });

  it('answers errors as Bedrock does: {"message"} with the exception the status stands for', () => {
    const body = createConverseAnswerTranslator().error(429, Buffer.from('{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}'));
    expect(JSON.parse(body.toString('utf8'))).to.deep.equal({ message: 'Rate limit reached' });
    const types = [400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 504].map(bedrockErrorType);
    expect(types).to.deep.equal([
      'ValidationException',
      'AccessDeniedException',
      'ServiceQuotaExceededException',
      'AccessDeniedException',
      'ResourceNotFoundException',
      'ValidationException',
      'ThrottlingException',
      'InternalServerException',
      'InternalServerException',
      'ServiceUnavailableException',
      'ModelTimeoutException',
    ]);
  });
});
