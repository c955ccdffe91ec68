import { expect } from 'chai';
import { parseResponsesRequest } from '../../../../../proxy/wire/responses/schema.js';
import { requestFromChat } from '../../../../../proxy/wire/responses/request-from-chat.js';
import { requestToChat } from '../../../../../proxy/wire/responses/request-to-chat.js';
import { chatToolName, originOf, toolNames } from '../../../../../proxy/wire/responses/tool-names.js';
import type { AppError } from '../../../../../shared/errors.js';
import { codexRequest } from '../../../../support/responses-bodies.js';

type Json = Record<string, unknown>;
const ALL = { reasoning: true, webSearch: true };
const NONE = { reasoning: false, webSearch: false };

function toChat(body: Json, abilities = ALL) {
  return requestToChat(parseResponsesRequest(body), 'upstream-model', abilities);
}

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('Responses → Chat request', () => {
  it('turns a tool output Chat cannot carry into user text after the call’s own outputs, never between a call and them', () => {
    const { request, dropped } = toChat({
      model: 'm',
      input: [
        { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'exec_command', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call_output', name: 'goal_objective', namespace: 'agent', output: 'goal' },
        { type: 'custom_tool_call_output', call_id: 'nowhere', output: 'lost' },
        { type: 'function_call_output', call_id: 'c2', output: 'two' },
      ],
    });
    const messages = request.messages as Json[];
    expect(messages.map((m) => [m.role, m.tool_call_id ?? m.content])).to.deep.equal([
      ['assistant', null],
      ['tool', 'c1'],
      ['tool', 'c2'],
      ['user', 'Output of agent.goal_objective:\ngoal\n\nOutput of a tool:\nlost'],
    ]);
    expect(dropped).to.deep.equal(['input[function_call_output].call_id', 'input[custom_tool_call_output].call_id']);
  });

  it('turns a Codex turn into Chat messages, one assistant message per run of text and calls', () => {
    const { request } = toChat(codexRequest());
    const messages = request.messages as Json[];
    expect(messages.map((m) => m.role)).to.deep.equal([
      'system',
      'developer',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(messages[0]).to.deep.equal({ role: 'system', content: 'You are a coding agent.' });
    expect(messages[5]!.tool_calls).to.deep.equal([
      { id: 'call_2', type: 'function', function: { name: 'mcp__files__read', arguments: '{"path":"README.md"}' } },
    ]);
    expect(messages[6]).to.deep.equal({ role: 'tool', tool_call_id: 'call_2', content: '# Hello' });
    expect(messages[7]!.tool_calls).to.deep.equal([
      { id: 'call_3', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch' }) } },
    ]);
    expect(request).to.deep.include({
      model: 'upstream-model',
      stream: true,
      stream_options: { include_usage: true },
      parallel_tool_calls: false,
      tool_choice: 'auto',
    });
  });

  it('flattens namespaces, gives free-form tools one string argument, and maps web search and reasoning when the target can', () => {
    const { request } = toChat(codexRequest());
    const tools = (request.tools as Json[]).map((t) => (t.function as Json).name);
    expect(tools).to.deep.equal(['shell', 'apply_patch', 'mcp__files__read']);
    const patch = (request.tools as Json[])[1]!.function as Json;
    expect(patch.parameters).to.deep.include({ required: ['input'] });
    expect(request.web_search_options).to.deep.equal({});
    expect(request.reasoning_effort).to.equal('medium');
  });

  it('names everything it drops, and drops web search and reasoning when the target cannot honour them', () => {
    expect(toChat(codexRequest()).dropped).to.have.members([
      'input[reasoning]',
      'tools[custom].format',
      'tools[tool_search]',
      'text.verbosity',
      'reasoning.summary',
      'include',
      'prompt_cache_key',
      'client_metadata',
    ]);
    const { request, dropped } = toChat(codexRequest(), NONE);
    expect(request).not.to.have.property('web_search_options');
    expect(request).not.to.have.property('reasoning_effort');
    expect(dropped).to.include.members(['tools[web_search]', 'reasoning.effort']);
  });

  it('drops nothing for a plain request with default settings', () => {
    const { request, dropped } = toChat({ model: 'm', input: 'hi', store: false, include: [], truncation: 'disabled', service_tier: 'auto' });
    expect(request).to.deep.equal({ model: 'upstream-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(dropped).to.deep.equal([]);
  });

  it('maps limits, sampling, structured output, images and tool choice', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const { request, dropped } = toChat({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'see' },
            { type: 'input_image', image_url: 'https://x/y.png', detail: 'low' },
            { type: 'input_image', file_id: 'file_1' },
          ],
        },
      ],
      max_output_tokens: 99,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u1',
      text: { format: { type: 'json_schema', name: 'out', schema, strict: true } },
      tools: [{ type: 'function', name: 'f', parameters: schema }],
      tool_choice: { type: 'function', name: 'f' },
    });
    expect(request).to.deep.include({
      max_completion_tokens: 99,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u1',
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema, strict: true } },
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
    expect((request.messages as Json[])[0]!.content).to.deep.equal([
      { type: 'text', text: 'see' },
      { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
    ]);
    expect(dropped).to.deep.equal(['input[message].content[input_image.file_id]']);
  });

  it('refuses previous_response_id with a 400 that says to send the whole input, and refuses background and logprobs', () => {
    const err = refusal(() => toChat({ model: 'm', input: 'hi', previous_response_id: 'resp_1' }));
    expect(err.status).to.equal(400);
    expect(err.message).to.match(/previous_response_id.*whole conversation/);
    expect(refusal(() => toChat({ model: 'm', input: 'hi', background: true })).message).to.include('background');
    expect(refusal(() => toChat({ model: 'm', input: 'hi', top_logprobs: 3 })).message).to.include('top_logprobs');
  });

  it('drops unknown top-level fields by name, never refusing them', () => {
    expect(toChat({ model: 'm', input: 'hi', some_new_field: { a: 1 } }).dropped).to.deep.equal(['some_new_field']);
  });
});

describe('Responses tool names on Chat', () => {
  it('keeps names Chat accepts and cleans or hash-shortens the rest, within 64 characters', () => {
    expect(chatToolName('shell')).to.equal('shell');
    const dotted = chatToolName('files.read');
    expect(dotted).to.match(/^files_read_[0-9a-f]{8}$/);
    const long = chatToolName('x'.repeat(100));
    expect(long).to.have.length(64);
    expect(long).to.match(/^[a-zA-Z0-9_-]+$/);
    expect(chatToolName('y'.repeat(100))).not.to.equal(long);
  });

  it('maps every flat name back to its namespace and name, and keeps two names that clean alike apart', () => {
    const names = toolNames([
      { type: 'namespace', name: 'github', tools: [{ type: 'function', name: 'search' }] },
      { type: 'namespace', name: 'mcp__codex_apps__gmail', tools: [{ type: 'function', name: '_search_emails' }] },
      { type: 'function', name: 'a.b' },
      { type: 'function', name: 'a_b' },
      { type: 'custom', name: 'apply_patch' },
    ]);
    expect(names.flat('search', 'github')).to.equal('github__search');
    expect(names.flat('_search_emails', 'mcp__codex_apps__gmail')).to.equal('mcp__codex_apps__gmail_search_emails');
    expect(originOf(names, 'github__search')).to.deep.equal({ name: 'search', namespace: 'github', custom: false });
    expect(originOf(names, names.flat('a.b'))).to.deep.include({ name: 'a.b' });
    expect(names.flat('a.b')).not.to.equal(names.flat('a_b'));
    expect(originOf(names, 'apply_patch').custom).to.equal(true);
    expect(originOf(names, 'unknown')).to.deep.equal({ name: 'unknown', custom: false });
  });
});

describe('Chat → Responses request', () => {
  const chat = {
    model: 'tg/x',
    messages: [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
        ],
      },
      { role: 'assistant', content: 'Calling.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
    ],
    tools: [{ type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object', properties: {} } } }],
    tool_choice: 'required',
    max_tokens: 50,
    temperature: 0.2,
    stream: true,
    stream_options: { include_usage: true },
    response_format: { type: 'json_schema', json_schema: { name: 'o', schema: { type: 'object' } } },
    reasoning_effort: 'low',
    seed: 3,
  };

  it('turns messages into items and tools into Responses tools, storing nothing', () => {
    const { request, dropped } = requestFromChat(chat, 'gpt-5', ALL);
    expect(request.input).to.deep.equal([
      { type: 'message', role: 'system', content: 'Be brief.' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look' },
          { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'auto' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Calling.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
    ]);
    expect(request).to.deep.include({
      model: 'gpt-5',
      tools: [{ type: 'function', name: 'f', description: 'F', parameters: { type: 'object', properties: {} }, strict: false }],
      tool_choice: 'required',
      max_output_tokens: 50,
      temperature: 0.2,
      stream: true,
      store: false,
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'o', schema: { type: 'object' } } },
    });
    expect(dropped).to.deep.equal(['seed']);
  });

  it('maps web_search_options to the web search tool, and drops reasoning where the model has none', () => {
    const { request, dropped } = requestFromChat(
      { model: 'x', messages: [], web_search_options: { search_context_size: 'low' }, reasoning_effort: 'high' },
      'm',
      NONE,
    );
    expect(request.tools).to.deep.equal([{ type: 'web_search', search_context_size: 'low' }]);
    expect(dropped).to.deep.equal(['reasoning_effort']);
  });

  it('keeps a system message of several texts as several parts (Messages system blocks reach it this way), a plain one as a string', () => {
    const chat = {
      model: 'x',
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Be brief.' },
            { type: 'text', text: 'Use British spelling.' },
          ],
        },
        { role: 'developer', content: 'Sandbox on.' },
        { role: 'user', content: 'hi' },
      ],
    };
    const input = requestFromChat(chat, 'm', ALL).request.input as Record<string, unknown>[];
    expect(input[0]).to.deep.equal({
      type: 'message',
      role: 'system',
      content: [
        { type: 'input_text', text: 'Be brief.' },
        { type: 'input_text', text: 'Use British spelling.' },
      ],
    });
    expect(input[1]).to.deep.equal({ type: 'message', role: 'developer', content: 'Sandbox on.' });
  });

  it('refuses n > 1 and logprobs', () => {
    expect(refusal(() => requestFromChat({ model: 'x', messages: [], n: 2 }, 'm', ALL)).message).to.include('n:');
    expect(refusal(() => requestFromChat({ model: 'x', messages: [], logprobs: true }, 'm', ALL)).message).to.include('logprobs');
  });
});
