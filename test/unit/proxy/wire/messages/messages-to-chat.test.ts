import { expect } from 'chai';
import { parseCall } from '../../../../../proxy/wire/index.js';
import { messagesToChat } from '../../../../../proxy/wire/messages/request-to-chat.js';
import type { AppError } from '../../../../../shared/errors.js';
import { testConfig } from '../../../../support/control-plane.js';

const model = testConfig().models.models.get('tg/gpt-direct')!;
const headers = { 'anthropic-version': '2023-06-01' };

function call(body: Record<string, unknown>) {
  return parseCall('messages', Buffer.from(JSON.stringify({ model: 'tg/gpt-direct', max_tokens: 100, ...body })), headers);
}

function translate(body: Record<string, unknown>) {
  return messagesToChat.request(call(body), model);
}

function refusal(body: Record<string, unknown>): AppError {
  try {
    translate(body);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

const sse = (chunks: unknown[]) => chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('');

/** Messages SSE text → its events, in order. */
function events(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((f) => {
      const [e, d] = f.split('\n');
      return { event: e!.slice('event: '.length), data: JSON.parse(d!.slice('data: '.length)) as Record<string, unknown> };
    });
}

describe('proxy translation, Messages client → Chat Completions provider: requests', () => {
  it('system blocks, roles and turns, images of both sources become Chat messages; max_tokens stays max_tokens', () => {
    const out = translate({
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
    });
    expect(out).to.deep.equal({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      user: 'u-42',
    });
  });

  it('tools, tool_choice, parallel tool_use blocks and their results become functions, tool_calls and tool messages, ids kept', () => {
    const out = translate({
      tools: [
        {
          name: 'weather',
          description: 'Weather now',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
            { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '3°C' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'no data' }], is_error: true },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    expect(out.tools).to.deep.equal([
      {
        type: 'function',
        function: { name: 'weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ]);
    expect(out.tool_choice).to.equal('required');
    expect(out.parallel_tool_calls).to.equal(false);
    expect((out.messages as unknown[]).slice(1)).to.deep.equal([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '3°C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: no data' },
      { role: 'user', content: [{ type: 'text', text: 'Summarise.' }] },
    ]);
  });

  it("a tool result's images follow the tool messages in a user message, since a tool message carries text only", () => {
    const image = { type: 'image', source: { type: 'url', url: 'https://example.com/shot.png' } };
    const out = translate({
      messages: [
        { role: 'user', content: 'Take a screenshot.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Done.' }, image] },
            { type: 'text', text: 'What do you see?' },
          ],
        },
      ],
    });
    expect((out.messages as unknown[]).slice(2)).to.deep.equal([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Done.' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/shot.png' } },
          { type: 'text', text: 'What do you see?' },
        ],
      },
    ]);
  });

  it('an earlier assistant turn of reasoning only becomes empty text, since Chat wants content or tool calls', () => {
    const out = translate({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] },
        { role: 'user', content: 'y' },
      ],
    });
    expect((out.messages as unknown[])[1]).to.deep.equal({ role: 'assistant', content: '' });
  });

  it('each tool_choice maps to its Chat counterpart', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const messages = [{ role: 'user', content: 'x' }];
    expect(translate({ tools, messages, tool_choice: { type: 'auto' } }).tool_choice).to.equal('auto');
    expect(translate({ tools, messages, tool_choice: { type: 'none' } }).tool_choice).to.equal('none');
    expect(translate({ tools, messages, tool_choice: { type: 'tool', name: 'f' } }).tool_choice).to.deep.equal({
      type: 'function',
      function: { name: 'f' },
    });
  });

  it("max_tokens is capped at the model's max_output_tokens, the ceiling the hold assumes", () => {
    expect(translate({ messages: [{ role: 'user', content: 'x' }], max_tokens: 32000 }).max_tokens).to.equal(model.max_output_tokens);
  });

  it('a stream asks the provider for its usage chunk, which billing reads', () => {
    const out = translate({ messages: [{ role: 'user', content: 'x' }], stream: true });
    expect(out).to.include({ stream: true });
    expect(out.stream_options).to.deep.equal({ include_usage: true });
  });

  it('what would change the answer and has no Chat form is refused with a 400 naming the field', () => {
    const messages = [{ role: 'user', content: 'x' }];
    const cases: [Record<string, unknown>, string][] = [
      [{ messages, stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, 'stop_sequences'],
      [{ messages: [...messages, { role: 'assistant', content: '{"answer":' }] }, 'messages.1'],
      [
        { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }] },
        'messages.0.content.0.type',
      ],
      [
        { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'search_result', source: 'x' }] }] }] },
        'messages.0.content.0.content.0.type',
      ],
    ];
    for (const [body, field] of cases) {
      const err = refusal(body);
      expect(err.status, field).to.equal(400);
      expect(err.message.startsWith(`${field}:`), err.message).to.equal(true);
    }
  });

  it('what does not change the answer is dropped: cache hints, service tier, disabled thinking, other metadata, an empty tool list and a choice without tools', () => {
    const out = translate({
      messages: [{ role: 'user', content: 'x' }],
      cache_control: { type: 'ephemeral' },
      service_tier: 'auto',
      thinking: { type: 'disabled' },
      metadata: { other: 1 },
      tools: [],
      tool_choice: { type: 'auto' },
    });
    expect(out).to.deep.equal({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
  });
});

describe('proxy translation, Messages client → Chat Completions provider: answers', () => {
  const chat = (message: Record<string, unknown>, finish: string, extra: Record<string, unknown> = {}) =>
    Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-abc',
        object: 'chat.completion',
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, ...extra }],
        usage: { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37, prompt_tokens_details: { cached_tokens: 10 } },
      }),
    );

  it('a completion becomes a message named for the alias, cached prompt tokens reported apart', () => {
    const out = JSON.parse(
      messagesToChat
        .answer(call({ messages: [] }))
        .json(chat({ content: 'Hi there' }, 'stop'))
        .toString(),
    );
    expect(out).to.deep.equal({
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'tg/gpt-direct',
      content: [{ type: 'text', text: 'Hi there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, output_tokens: 7 },
    });
  });

  it('tool calls become tool_use blocks with their input parsed; unparsable arguments become {}', () => {
    const body = chat(
      {
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":' } },
        ],
      },
      'tool_calls',
    );
    const out = JSON.parse(
      messagesToChat
        .answer(call({ messages: [] }))
        .json(body)
        .toString(),
    );
    expect(out.content).to.deep.equal([
      { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'call_2', name: 'weather', input: {} },
    ]);
    expect(out.stop_reason).to.equal('tool_use');
  });

  it('finish reasons map to stop reasons, a named stop sequence included', () => {
    const reason = (finish: string, extra: Record<string, unknown> = {}) =>
      JSON.parse(
        messagesToChat
          .answer(call({ messages: [], stop_sequences: ['END'] }))
          .json(chat({ content: 'x' }, finish, extra))
          .toString(),
      ) as Record<string, unknown>;
    expect(reason('stop')).to.include({ stop_reason: 'end_turn', stop_sequence: null });
    expect(reason('stop', { stop_reason: 'END' })).to.include({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    expect(reason('length')).to.include({ stop_reason: 'max_tokens' });
    expect(reason('content_filter')).to.include({ stop_reason: 'refusal' });
  });

  it('provider errors keep their message and take the Messages error type of their status', () => {
    const t = messagesToChat.answer(call({ messages: [] }));
    const body = (status: number) =>
      JSON.parse(t.error(status, Buffer.from(JSON.stringify({ error: { message: `m${status}`, type: 'x' } }))).toString());
    expect(body(400)).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'm400' } });
    expect(body(401).error.type).to.equal('authentication_error');
    expect(body(403).error.type).to.equal('permission_error');
    expect(body(404).error.type).to.equal('not_found_error');
    expect(body(429).error.type).to.equal('rate_limit_error');
    expect(body(500).error.type).to.equal('api_error');
    expect(body(503).error.type).to.equal('overloaded_error');
    expect(JSON.parse(t.error(502, Buffer.from('<html>bad gateway</html>')).toString()).error.message).to.equal(
      'The model provider answered with status 502.',
    );
    // An error sent with a 200 (some servers do) still reads as an error, with the provider's message.
    expect(JSON.parse(t.json(Buffer.from('{"error":{"message":"model overloaded"}}')).toString())).to.deep.equal({
      type: 'error',
      error: { type: 'api_error', message: 'model overloaded' },
    });
  });

  it('a stream becomes the Messages event sequence, text then a tool call with its argument fragments', () => {
    const t = messagesToChat.answer(call({ messages: [], stream: true }));
    const head = { id: 'chatcmpl-s', object: 'chat.completion.chunk', model: 'gpt-4o-mini' };
    const text = sse([
      { ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...head, choices: [{ index: 0, delta: { content: 'Let me ' }, finish_reason: null }] },
      { ...head, choices: [{ index: 0, delta: { content: 'check.' }, finish_reason: null }] },
      {
        ...head,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'weather', arguments: '' } }] },
            finish_reason: null,
          },
        ],
      },
      { ...head, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null }] },
      { ...head, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, finish_reason: null }] },
      { ...head, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { ...head, choices: [], usage: { prompt_tokens: 12, completion_tokens: 9 } },
      '[DONE]',
    ]);
    // Fed in small uneven pieces, as a socket delivers them.
    let out = '';
    for (let i = 0; i < text.length; i += 37) out += t.push(Buffer.from(text.slice(i, i + 37))).toString();
    out += t.end().toString();
    const seq = events(out);
    expect(seq.map((e) => e.event)).to.deep.equal([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect((seq[0]!.data.message as Record<string, unknown>).model).to.equal('tg/gpt-direct');
    expect(seq[6]!.data.content_block).to.deep.equal({ type: 'tool_use', id: 'call_9', name: 'weather', input: {} });
    expect(seq[7]!.data).to.deep.equal({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } });
    expect(seq[10]!.data).to.deep.equal({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 },
    });
  });

  it('a stream the provider breaks off, or that carries an error, ends in an error event', () => {
    const head = { id: 'chatcmpl-s', object: 'chat.completion.chunk' };
    const cut = messagesToChat.answer(call({ messages: [], stream: true }));
    const started = cut.push(Buffer.from(sse([{ ...head, choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] }])));
    const end = events(started.toString() + cut.fail('The model provider broke off the answer.').toString());
    expect(end.at(-1)).to.deep.equal({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'The model provider broke off the answer.' } },
    });

    const inBand = messagesToChat.answer(call({ messages: [], stream: true }));
    const out = events(inBand.push(Buffer.from(sse([{ error: { message: 'Rate limit reached.', type: 'rate_limit_error' } }]))).toString());
    expect(out).to.deep.equal([{ event: 'error', data: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached.' } } }]);
    expect(inBand.end().length).to.equal(0);

    const early = messagesToChat.answer(call({ messages: [], stream: true }));
    early.push(Buffer.from(sse([{ ...head, choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] }])));
    expect(events(early.end().toString()).at(-1)!.event).to.equal('error');
  });
});
