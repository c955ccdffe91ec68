import { expect } from 'chai';
import { parseResponsesRequest } from '../../../../../proxy/wire/responses/schema.js';
import { answerFromChat } from '../../../../../proxy/wire/responses/answer-from-chat.js';
import { answerToChat } from '../../../../../proxy/wire/responses/answer-to-chat.js';
import { responsesCall } from '../../../../../proxy/wire/responses/context.js';
import { responsesAnswerFromChat } from '../../../../../proxy/wire/responses/stream-from-chat.js';
import { chatAnswerFromResponses } from '../../../../../proxy/wire/responses/stream-to-chat.js';
import { codexRequest } from '../../../../support/responses-bodies.js';

type Json = Record<string, unknown>;
const call = responsesCall('tg/gpt-direct', parseResponsesRequest(codexRequest()));

const completion = {
  id: 'chatcmpl-abc',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-x',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'call_9', type: 'function', function: { name: 'mcp__files__read', arguments: '{"path":"a"}' } },
          { id: 'call_10', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: {
    prompt_tokens: 100,
    completion_tokens: 20,
    total_tokens: 120,
    prompt_tokens_details: { cached_tokens: 40 },
    completion_tokens_details: { reasoning_tokens: 5 },
  },
};

describe('Chat answer → Responses answer', () => {
  it('gives text as a message item and calls under the names the client declared', () => {
    const r = answerFromChat(call, completion);
    expect(r).to.deep.include({
      id: 'resp_abc',
      object: 'response',
      status: 'completed',
      model: 'tg/gpt-direct',
      created_at: 1700000000,
      error: null,
    });
    const output = r.output as Json[];
    expect(output.map((i) => i.type)).to.deep.equal(['message', 'function_call', 'custom_tool_call']);
    expect((output[0]!.content as Json[])[0]).to.deep.include({ type: 'output_text', text: 'Reading.' });
    expect(output[1]).to.deep.include({ call_id: 'call_9', name: 'read', namespace: 'mcp__files__', arguments: '{"path":"a"}' });
    expect(output[2]).to.deep.include({ call_id: 'call_10', name: 'apply_patch', input: '*** Begin Patch' });
    expect(r.usage).to.deep.equal({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 40 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 120,
    });
    expect(r.tools).to.deep.equal(codexRequest().tools);
  });

  it('says incomplete with the reason when the token limit cut the answer', () => {
    const cut = { ...completion, choices: [{ index: 0, message: { role: 'assistant', content: 'Part' }, finish_reason: 'length' }] };
    expect(answerFromChat(call, cut)).to.deep.include({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('turns a 200 that is not a completion into an error body', () => {
    expect(answerFromChat(call, { error: { message: 'boom' } })).to.deep.equal({
      error: { message: 'boom', type: 'api_error', param: null, code: null },
    });
  });

  it('comes back to the same Chat answer through the other direction', () => {
    const back = answerToChat('tg/gpt-direct', answerFromChat(responsesCall('tg/gpt-direct', parseResponsesRequest({ model: 'm' })), completion));
    const choice = (back.choices as Json[])[0]!;
    expect(choice.finish_reason).to.equal('tool_calls');
    expect((choice.message as Json).content).to.equal('Reading.');
    expect(((choice.message as Json).tool_calls as Json[]).map((c) => c.function)).to.deep.equal(
      completion.choices[0]!.message.tool_calls.map((c) => c.function),
    );
    expect(back.usage).to.deep.equal(completion.usage);
  });
});

describe('Responses answer → Chat answer', () => {
  it('gives refusals, function and free-form calls, and the finish reason of an incomplete answer', () => {
    const response = {
      id: 'resp_1',
      created_at: 5,
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        {
          type: 'message',
          content: [
            { type: 'output_text', text: 'a' },
            { type: 'refusal', refusal: 'no' },
          ],
        },
        { type: 'custom_tool_call', call_id: 'c1', name: 'patch', input: 'x' },
      ],
      usage: { input_tokens: 3, output_tokens: 4 },
    };
    const chat = answerToChat('alias', response);
    expect(chat).to.deep.include({ id: 'chatcmpl-1', created: 5, model: 'alias', object: 'chat.completion' });
    expect((chat.choices as Json[])[0]).to.deep.equal({
      index: 0,
      message: {
        role: 'assistant',
        content: 'a',
        refusal: 'no',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'patch', arguments: '{"input":"x"}' } }],
      },
      logprobs: null,
      finish_reason: 'content_filter',
    });
  });
});

describe('Responses answer translators: errors', () => {
  it('give the provider error in the OpenAI shape, either way', () => {
    const anthropic = Buffer.from(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow' } }));
    for (const t of [responsesAnswerFromChat(call), chatAnswerFromResponses('a', false)]) {
      expect(JSON.parse(t.error(429, anthropic).toString())).to.deep.equal({
        error: { message: 'slow', type: 'rate_limit_error', param: null, code: null },
      });
    }
  });

  it('translate whole JSON answers through json()', () => {
    const body = responsesAnswerFromChat(call).json(Buffer.from(JSON.stringify(completion)));
    expect(JSON.parse(body.toString())).to.deep.include({ object: 'response', status: 'completed' });
  });
});
