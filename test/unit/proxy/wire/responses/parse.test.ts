import { expect } from 'chai';
import { toOpenAIErrorBody } from '../../../../../proxy/wire/responses/errors.js';
import { responsesOutputLimits } from '../../../../../proxy/wire/responses/parse.js';
import { parseResponsesRequest } from '../../../../../proxy/wire/responses/schema.js';
import { responsesUsageReader, usageFromResponse } from '../../../../../proxy/wire/responses/usage.js';
import type { AppError } from '../../../../../shared/errors.js';
import { codexRequest } from '../../../../support/responses-bodies.js';

function refusal(body: unknown): AppError {
  try {
    parseResponsesRequest(body);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('Responses format: request checks', () => {
  it('accepts what Codex sends: namespaces, custom and tool_search tools, reasoning items, client metadata', () => {
    const request = parseResponsesRequest(codexRequest());
    expect(request.model).to.equal('tg/gpt-direct');
    expect(request.tools).to.have.length(5);
  });

  it('accepts input as a plain string and short-form messages without a type', () => {
    expect(parseResponsesRequest({ model: 'm', input: 'hi' }).input).to.equal('hi');
    expect(parseResponsesRequest({ model: 'm', input: [{ role: 'user', content: 'hi' }] }).input).to.have.length(1);
  });

  it('tolerates item, part and tool types it does not know (they are dropped later, not refused)', () => {
    const body = {
      model: 'm',
      input: [
        { type: 'local_shell_call', id: 'x' },
        { role: 'user', content: [{ type: 'input_audio', data: 'x' }] },
      ],
      tools: [{ type: 'image_generation' }, { type: 'web_search_2025_08_26' }],
    };
    expect(() => parseResponsesRequest(body)).not.to.throw();
  });

  const bad: [string, unknown, string][] = [
    ['a body that is not an object', [1], 'JSON object'],
    ['no model', { input: 'x' }, 'model'],
    ['input of the wrong type', { model: 'm', input: 3 }, 'input'],
    ['an item that is not an object', { model: 'm', input: ['x'] }, 'input[0]'],
    ['a function call without call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    ['a function output without output', { model: 'm', input: [{ type: 'function_call_output', call_id: 'c' }] }, 'input[0].output'],
    ['a message with an unknown role', { model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    ['a text part without text', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text'],
    ['a function tool without a name', { model: 'm', tools: [{ type: 'function' }] }, 'tools[0].name'],
    [
      'a namespace whose member has no name',
      { model: 'm', tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'function' }] }] },
      'tools[0].tools[0]',
    ],
    ['a tool without a type', { model: 'm', tools: [{ name: 'x' }] }, 'tools[0].type'],
    ['max_output_tokens of zero', { model: 'm', max_output_tokens: 0 }, 'max_output_tokens'],
    ['temperature out of range', { model: 'm', temperature: 3 }, 'temperature'],
    ['an unknown reasoning effort', { model: 'm', reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['a json_schema format without a schema', { model: 'm', text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format'],
    ['stream that is not a boolean', { model: 'm', stream: 'yes' }, 'stream'],
  ];
  for (const [what, body, field] of bad) {
    it(`refuses ${what} with a 400 naming ${field}`, () => {
      const err = refusal(body);
      expect(err.status).to.equal(400);
      expect(err.message).to.include(field);
    });
  }

  it('refuses a call with no input and nothing else that carries the conversation, as a missing `messages` is refused', () => {
    let err: AppError | undefined;
    try {
      responsesOutputLimits({ model: 'm', max_output_tokens: 10 });
    } catch (e) {
      err = e as AppError;
    }
    expect(err?.status).to.equal(400);
    expect(err?.message).to.match(/^input: required/);
    // An earlier response, a stored prompt or a conversation supplies the input: the provider resolves them.
    for (const carrier of [{ previous_response_id: 'resp_1' }, { prompt: { id: 'pmpt_1' } }, { conversation: 'conv_1' }]) {
      expect(responsesOutputLimits({ model: 'm', ...carrier }).maxTokens).to.equal(undefined);
    }
    expect(responsesOutputLimits({ model: 'm', input: 'hi', max_output_tokens: 10 }).maxTokens).to.equal(10);
  });
});

describe('Responses format: errors', () => {
  it('keeps an OpenAI provider error as it is, and turns an Anthropic one into the OpenAI shape', () => {
    const openai = { error: { message: 'bad', type: 'invalid_request_error', param: 'input', code: 'x' } };
    expect(JSON.parse(toOpenAIErrorBody(400, Buffer.from(JSON.stringify(openai))).toString()).error).to.deep.equal(openai.error);
    const anthropic = { type: 'error', error: { type: 'overloaded_error', message: 'busy' } };
    expect(JSON.parse(toOpenAIErrorBody(529, Buffer.from(JSON.stringify(anthropic))).toString()).error).to.deep.equal({
      message: 'busy',
      type: 'api_error',
      param: null,
      code: null,
    });
    expect(JSON.parse(toOpenAIErrorBody(502, Buffer.from('<html>')).toString()).error.message).to.include('502');
  });
});

const response = {
  id: 'resp_1',
  object: 'response',
  status: 'completed',
  output: [
    { type: 'web_search_call', id: 'ws_1', status: 'completed' },
    { type: 'web_search_call', id: 'ws_2', status: 'completed' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
  ],
  usage: {
    input_tokens: 1000,
    input_tokens_details: { cached_tokens: 600 },
    output_tokens: 300,
    output_tokens_details: { reasoning_tokens: 200 },
    total_tokens: 1300,
  },
};

const neutral = {
  inputTokens: 400,
  cacheReadTokens: 600,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  outputTokens: 300,
  reasoningTokens: 200,
  webSearchRequests: 2,
};

describe('Responses format: usage', () => {
  it('reads an answer: cached tokens apart from the uncached input, reasoning inside output, searches counted', () => {
    expect(usageFromResponse(response)).to.deep.equal(neutral);
  });

  it('reads nothing when the answer reports no usage, and zero for missing details', () => {
    expect(usageFromResponse({ output: [] })).to.equal(undefined);
    expect(usageFromResponse({ usage: { input_tokens: 5, output_tokens: 2 } })).to.deep.include({
      inputTokens: 5,
      cacheReadTokens: 0,
      reasoningTokens: 0,
    });
  });

  it('reads the usage of a stream off its final event, whichever way it ended', () => {
    for (const type of ['response.completed', 'response.incomplete', 'response.failed']) {
      const stream = responsesUsageReader.stream();
      stream.event(JSON.stringify({ type: 'response.created', response: { ...response, usage: null } }), 'response.created');
      stream.event('{"type":"response.output_text.delta","delta":"hi"}', 'response.output_text.delta');
      stream.event(JSON.stringify({ type, response }), type);
      expect(stream.usage(), type).to.deep.equal(neutral);
    }
  });

  it('reports no usage for a stream that never finished', () => {
    const stream = responsesUsageReader.stream();
    stream.event(JSON.stringify({ type: 'response.in_progress', response }), 'response.in_progress');
    expect(stream.usage()).to.equal(undefined);
  });
});
