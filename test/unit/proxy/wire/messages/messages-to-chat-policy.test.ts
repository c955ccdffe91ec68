import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { parseCall } from '../../../../../proxy/wire/index.js';
import { messagesToChat } from '../../../../../proxy/wire/messages/request-to-chat.js';
import type { TranslateOptions, Translation } from '../../../../../proxy/translate/types.js';
import { testConfig } from '../../../../support/control-plane.js';

/** Messages client → Chat Completions provider: one test per rule of the translation policy (docs/proxy.md). */

type Json = Record<string, unknown>;
const model = testConfig().models.models.get('tg/gpt-direct')!;
const user = (content: unknown) => ({ role: 'user', content });

function translate(body: Json, options: TranslateOptions = {}): Translation {
  const raw = Buffer.from(JSON.stringify({ model: 'tg/gpt-direct', max_tokens: 100, messages: [user('x')], ...body }));
  return messagesToChat.translate(parseCall('messages', raw, { 'anthropic-version': '2023-06-01' }), model, options);
}

describe('translation policy, Messages client → Chat Completions provider', () => {
  it('a system turn within messages becomes a system message in place', () => {
    const { request, dropped } = translate({
      system: 'first',
      messages: [
        user('a'),
        { role: 'assistant', content: 'b' },
        { role: 'system', content: 'mid' },
        { role: 'system', content: [{ type: 'text', text: 'blocks', cache_control: { type: 'ephemeral' } }] },
        user('c'),
      ],
    });
    expect(request.messages).to.deep.equal([
      { role: 'system', content: 'first' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'system', content: 'mid' },
      { role: 'system', content: [{ type: 'text', text: 'blocks' }] },
      { role: 'user', content: 'c' },
    ]);
    expect(dropped).to.deep.equal(['cache_control']);
  });

  it('on a reasoning model, a thinking budget becomes the nearest reasoning_effort', () => {
    const cases: [number, string][] = [
      [1024, 'low'],
      [2047, 'low'],
      [2048, 'medium'],
      [4096, 'medium'],
      [8191, 'medium'],
      [8192, 'high'],
      [32000, 'high'],
    ];
    for (const [budget, effort] of cases) {
      const { request, dropped } = translate({ thinking: { type: 'enabled', budget_tokens: budget } }, { reasoning: true });
      expect(request.reasoning_effort, String(budget)).to.equal(effort);
      expect(dropped).to.deep.equal([]);
    }
  });

  it('on a reasoning model, output_config.effort sets the level (max asks for high); adaptive thinking alone leaves the provider its default', () => {
    const effort = (e: string) => translate({ thinking: { type: 'adaptive' }, output_config: { effort: e } }, { reasoning: true });
    expect(effort('low').request.reasoning_effort).to.equal('low');
    expect(effort('high').request.reasoning_effort).to.equal('high');
    expect(effort('max').request.reasoning_effort).to.equal('high');
    // An explicit level wins over a budget.
    expect(
      translate({ thinking: { type: 'enabled', budget_tokens: 20000 }, output_config: { effort: 'low' } }, { reasoning: true }).request
        .reasoning_effort,
    ).to.equal('low');
    const adaptive = translate({ thinking: { type: 'adaptive' } }, { reasoning: true });
    expect(adaptive.request).to.not.have.property('reasoning_effort');
    expect(adaptive.dropped).to.deep.equal([]);
    expect(effort('extreme').dropped).to.deep.equal(['output_config.effort']);
  });

  it('on a model without reasoning, thinking and effort are dropped by name; disabled thinking asks for nothing', () => {
    const { request, dropped } = translate({ thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'high' } });
    expect(request).to.not.have.property('reasoning_effort');
    expect(dropped).to.have.members(['thinking', 'output_config.effort']);
    expect(translate({ thinking: { type: 'adaptive' } }).dropped).to.deep.equal(['thinking']);
    expect(translate({ thinking: { type: 'disabled' } }, { reasoning: true }).dropped).to.deep.equal([]);
    expect(translate({ thinking: { type: 'disabled' } }).dropped).to.deep.equal([]);
  });

  it('thinking blocks of earlier assistant turns are dropped by name: they verify only where they were made', () => {
    const { request, dropped } = translate({
      messages: [
        user('a'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xyz' },
            { type: 'text', text: 'b' },
          ],
        },
        user('c'),
      ],
    });
    expect((request.messages as Json[])[1]).to.deep.equal({ role: 'assistant', content: 'b' });
    expect(dropped).to.deep.equal(['messages[thinking]', 'messages[redacted_thinking]']);
  });

  it('context_management, top_k, unknown fields and other output_config keys are dropped by name', () => {
    const { request, dropped } = translate({
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      top_k: 5,
      some_new_field: 1,
      output_config: { task_budget: 3 },
    });
    expect(request).to.deep.equal({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
    expect(dropped).to.deep.equal(['context_management', 'top_k', 'some_new_field', 'output_config.task_budget']);
  });

  it('cache_control is dropped wherever it appears, and named once', () => {
    const cc = { type: 'ephemeral' };
    const { request, dropped } = translate({
      cache_control: cc,
      system: [{ type: 'text', text: 's', cache_control: cc }],
      messages: [
        user([{ type: 'text', text: 'q', cache_control: cc }]),
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {}, cache_control: cc }] },
        user([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r', cache_control: cc }], cache_control: cc }]),
      ],
      tools: [{ name: 'f', input_schema: { type: 'object' }, cache_control: cc }],
    });
    expect(JSON.stringify(request)).to.not.include('cache_control');
    expect(dropped).to.deep.equal(['cache_control']);
  });

  it('metadata.user_id becomes user, hashed to 43 characters (stable) when longer than the 64 OpenAI takes; other metadata is dropped by name', () => {
    const long = `user_${'a'.repeat(64)}_account_${'b'.repeat(36)}_session_${'c'.repeat(36)}`;
    const { request, dropped } = translate({ metadata: { user_id: long, foo: 'bar' } });
    expect(request.user).to.equal(createHash('sha256').update(long).digest('base64url'));
    expect((request.user as string).length).to.equal(43);
    expect(translate({ metadata: { user_id: long } }).request.user).to.equal(request.user);
    expect(dropped).to.deep.equal(['metadata.foo']);
    expect(translate({ metadata: { user_id: 'u-1' } }).request.user).to.equal('u-1');
  });

  it('unknown anthropic-beta features are dropped by name; those the translation keeps are not; reasoning ones follow reasoning', () => {
    const betas = ['claude-code-20250219', 'mid-conversation-system-2026-04-07', 'context-management-2025-06-27', 'effort-2025-11-24'];
    expect(translate({}, { betas }).dropped).to.deep.equal(['anthropic-beta:context-management-2025-06-27', 'anthropic-beta:effort-2025-11-24']);
    const kept = translate({ output_config: { effort: 'medium' } }, { betas, reasoning: true });
    expect(kept.dropped).to.deep.equal(['anthropic-beta:context-management-2025-06-27']);
  });

  it('web search becomes web_search_options with the user location; its limits and the other server tools are dropped by name', () => {
    const { request, dropped } = translate({
      tools: [
        {
          type: 'web_search_20250305',
          name: 'web_search',
          max_uses: 3,
          allowed_domains: ['example.com'],
          user_location: { type: 'approximate', city: 'Paris', country: 'FR' },
        },
        { type: 'code_execution_20250522', name: 'code_execution' },
        { type: 'bash_20250124', name: 'bash' },
        { name: 'f', input_schema: { type: 'object' }, input_examples: [{}] },
      ],
    });
    expect(request.web_search_options).to.deep.equal({ user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR' } } });
    expect(request.tools).to.deep.equal([{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]);
    expect(dropped).to.deep.equal([
      'tools[web_search_20250305].allowed_domains',
      'tools[web_search_20250305].max_uses',
      'tools[code_execution_20250522]',
      'tools[bash_20250124]',
      'tools.input_examples',
    ]);
  });

  it('a tool choice that forces a dropped tool is dropped by name; with no function tool left, so is a forced choice', () => {
    const tools = [
      { type: 'web_search_20250305', name: 'web_search' },
      { name: 'f', input_schema: { type: 'object' } },
    ];
    const named = translate({ tools, tool_choice: { type: 'tool', name: 'web_search' } });
    expect(named.request).to.not.have.property('tool_choice');
    expect(named.dropped).to.deep.equal(['tool_choice']);
    const any = translate({ tools: [tools[0]], tool_choice: { type: 'any' } });
    expect(any.request).to.not.have.property('tools');
    expect(any.request).to.not.have.property('tool_choice');
    expect(any.dropped).to.deep.equal(['tool_choice']);
    // A name that is no tool at all is the client's mistake, for the provider to answer, not a drop.
    const unknown = translate({ tools, tool_choice: { type: 'tool', name: 'g' } });
    expect(unknown.request.tool_choice).to.deep.equal({ type: 'function', function: { name: 'g' } });
    expect(unknown.dropped).to.deep.equal([]);
    // auto without tools changes nothing: removed, not named.
    expect(translate({ tools: [tools[0]], tool_choice: { type: 'auto' } }).dropped).to.deep.equal([]);
  });

  it('tool_choice variants, stop sequences and images translate without drops', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const { request, dropped } = translate({
      tools,
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      messages: [user([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }])],
    });
    expect(request).to.include({ tool_choice: 'required', parallel_tool_calls: false });
    expect(request.stop).to.deep.equal(['END']);
    expect((request.messages as Json[])[0]).to.deep.equal({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
    });
    expect(dropped).to.deep.equal([]);
  });

  it('the Translator.request shim keeps the request alone, reading the reasoning flag from the model entry', () => {
    const raw = Buffer.from(
      JSON.stringify({ model: 'tg/gpt-direct', max_tokens: 100, messages: [user('x')], thinking: { type: 'enabled', budget_tokens: 5000 } }),
    );
    const call = parseCall('messages', raw, { 'anthropic-version': '2023-06-01' });
    expect(messagesToChat.request(call, model)).to.not.have.property('reasoning_effort');
    expect(messagesToChat.request(call, { ...model, reasoning: true } as typeof model)).to.include({ reasoning_effort: 'medium' });
  });
});
