import { expect } from 'chai';
import { parseResponsesRequest } from '../../../../../proxy/wire/responses/schema.js';
import { responsesCall } from '../../../../../proxy/wire/responses/context.js';
import { responsesAnswerFromChat } from '../../../../../proxy/wire/responses/stream-from-chat.js';
import { chatAnswerFromResponses } from '../../../../../proxy/wire/responses/stream-to-chat.js';
import { codexRequest } from '../../../../support/responses-bodies.js';

type Json = Record<string, unknown>;
const call = responsesCall('tg/gpt-direct', parseResponsesRequest(codexRequest()));

const head = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1, model: 'up' };
const chunk = (delta: Json, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] });
const sse = (chunks: unknown[]) => chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('');

/** Responses SSE text → its events, checking each frame's `event:` name matches its data's type. */
function events(text: string): Json[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length)) as Json;
      expect(eventLine).to.equal(`event: ${String(data.type)}`);
      return data;
    });
}

const chatStream = sse([
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hel' }),
  chunk({ content: 'lo' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'mcp__files__read', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path"' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: ':"a"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '"p\\n"}' } }] }),
  chunk({}, 'tool_calls'),
  {
    ...head,
    choices: [],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 7,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  },
  '[DONE]',
]);

describe('Chat stream → Responses events', () => {
  it('sends the events in order, numbered, with the calls under the declared names and usage at the end', () => {
    const t = responsesAnswerFromChat(call);
    const out = events(Buffer.concat([t.push(Buffer.from(chatStream)), t.end()]).toString());
    expect(out.map((e) => e.type)).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(out.map((e) => e.sequence_number)).to.deep.equal(out.map((_, i) => i));
    expect(out[6]).to.deep.include({ text: 'Hello', output_index: 0, content_index: 0 });
    expect(out[9]!.item).to.deep.include({
      type: 'function_call',
      name: 'read',
      namespace: 'mcp__files__',
      call_id: 'call_1',
      status: 'in_progress',
    });
    expect(out[12]).to.deep.include({ arguments: '{"path":"a"}', output_index: 1 });
    expect(out[16]).to.deep.include({ input: 'p\n', output_index: 2 });
    const response = out[18]!.response as Json;
    expect(response).to.deep.include({ id: 'resp_s1', status: 'completed', model: 'tg/gpt-direct' });
    expect(response.usage).to.deep.equal({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 17,
    });
    expect((response.output as Json[]).map((i) => i.type)).to.deep.equal(['message', 'function_call', 'custom_tool_call']);
  });

  it('ends incomplete when the token limit cut the answer', () => {
    const t = responsesAnswerFromChat(call);
    const out = events(t.push(Buffer.from(sse([chunk({ content: 'a' }), chunk({}, 'length'), '[DONE]']))).toString());
    expect(out.at(-1)).to.deep.include({ type: 'response.incomplete' });
    expect((out.at(-1)!.response as Json).incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
  });

  it('fails with response.failed when the provider errs mid-stream, breaks off, or the connection drops', () => {
    const errored = responsesAnswerFromChat(call);
    const a = events(errored.push(Buffer.from(sse([chunk({ content: 'a' }), { error: { message: 'overloaded' } }]))).toString());
    expect(a.at(-1)).to.deep.include({ type: 'response.failed' });
    expect((a.at(-1)!.response as Json).error).to.deep.equal({ code: 'server_error', message: 'overloaded' });
    const broken = responsesAnswerFromChat(call);
    broken.push(Buffer.from(sse([chunk({ content: 'a' })])));
    expect(events(broken.end().toString()).at(-1)).to.deep.include({ type: 'response.failed' });
    const dropped = responsesAnswerFromChat(call);
    expect(events(dropped.fail('socket hang up').toString()).map((e) => e.type)).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.failed',
    ]);
  });
});

const created = { id: 'resp_r1', created_at: 9, status: 'in_progress', output: [] };
const responsesStream = [
  { type: 'response.created', response: created },
  { type: 'response.in_progress', response: created },
  { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } },
  { type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: 'msg_1', content: [] } },
  { type: 'response.output_text.delta', item_id: 'msg_1', delta: 'Hi' },
  { type: 'response.output_item.added', output_index: 2, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '' } },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"a"' },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: ':1}' },
  {
    type: 'response.output_item.done',
    output_index: 2,
    item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
  },
  { type: 'response.output_item.added', output_index: 3, item: { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_2', name: 'p', input: '' } },
  { type: 'response.output_item.done', output_index: 3, item: { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_2', name: 'p', input: 'x' } },
  {
    type: 'response.completed',
    response: { ...created, status: 'completed', usage: { input_tokens: 5, output_tokens: 6, input_tokens_details: { cached_tokens: 1 } } },
  },
];
const responsesSse = responsesStream.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

function chunks(text: string): (Json | string)[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((f) => f.slice('data: '.length))
    .map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as Json)));
}

describe('Responses stream → Chat chunks', () => {
  it('gives text, tool calls (ids and names first, then arguments) and the finish reason, then [DONE]', () => {
    const t = chatAnswerFromResponses('alias', true);
    const out = chunks(Buffer.concat([t.push(Buffer.from(responsesSse)), t.end()]).toString());
    const deltas = out.filter((c): c is Json => typeof c !== 'string' && (c.choices as Json[]).length > 0).map((c) => (c.choices as Json[])[0]!);
    expect(deltas.map((d) => d.delta)).to.deep.equal([
      { role: 'assistant', content: '' },
      { content: 'Hi' },
      { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] },
      { tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'p', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"input":"x"}' } }] },
      {},
    ]);
    expect(deltas.at(-1)!.finish_reason).to.equal('tool_calls');
    const usage = out.at(-2) as Json;
    expect(usage.usage).to.deep.include({ prompt_tokens: 5, completion_tokens: 6, prompt_tokens_details: { cached_tokens: 1 } });
    expect(out.at(-1)).to.equal('[DONE]');
    expect((out[0] as Json).id).to.equal('chatcmpl-r1');
  });

  it('sends no usage chunk unless the client asked, and an error chunk when the answer failed', () => {
    const quiet = chatAnswerFromResponses('alias', false);
    const out = chunks(quiet.push(Buffer.from(responsesSse)).toString());
    expect(out.filter((c) => typeof c !== 'string' && c.usage !== undefined)).to.have.length(0);
    const failed = chatAnswerFromResponses('alias', false);
    const failure = { type: 'response.failed', response: { ...created, status: 'failed', error: { code: 'server_error', message: 'bad' } } };
    const f = chunks(failed.push(Buffer.from(`event: response.failed\ndata: ${JSON.stringify(failure)}\n\n`)).toString());
    expect(f.at(-1)).to.deep.equal({ error: { message: 'bad', type: 'api_error', param: null, code: 'server_error' } });
    const cut = chatAnswerFromResponses('alias', false);
    cut.push(Buffer.from(`data: ${JSON.stringify(responsesStream[0])}\n\n`));
    expect(chunks(cut.end().toString()).at(-1)).to.have.property('error');
  });
});
