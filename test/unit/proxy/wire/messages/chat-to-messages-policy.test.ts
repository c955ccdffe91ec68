import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { parseCall } from '../../../../../proxy/wire/index.js';
import { chatToMessages } from '../../../../../proxy/wire/messages/request-from-chat.js';
import type { TranslateOptions, Translation } from '../../../../../proxy/translate/types.js';
import type { AppError } from '../../../../../shared/errors.js';
import { modelFromEntry, type ModelConfig } from '../../../../../shared/models.js';

/** Chat Completions client → Messages provider: one test per rule of the translation policy (docs/proxy.md). */

type Json = Record<string, unknown>;
const MODEL: ModelConfig = modelFromEntry({
  alias: 'tg/claude-direct',
  provider: 'p',
  upstream_model: 'claude-sonnet-4-5',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 64000,
});
const REASONING: TranslateOptions = { reasoning: true };

function translate(body: Json, options: TranslateOptions = {}): Translation {
  const raw = Buffer.from(JSON.stringify({ model: MODEL.alias, messages: [{ role: 'user', content: 'hi' }], ...body }));
  return chatToMessages.translate(parseCall('chat', raw, {}), MODEL, options);
}

const TOOLS = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];

describe('translation policy, Chat Completions client → Messages provider', () => {
  it('max_completion_tokens becomes max_tokens', () => {
    expect(translate({ max_completion_tokens: 777 }).request.max_tokens).to.equal(777);
  });

  it('on a reasoning model, reasoning_effort becomes a thinking budget from the shared scale, held to half of max_tokens', () => {
    const budget = (effort: string, max = 64000) => translate({ reasoning_effort: effort, max_completion_tokens: max }, REASONING).request.thinking;
    expect(budget('minimal')).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
    expect(budget('low')).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
    expect(budget('medium')).to.deep.equal({ type: 'enabled', budget_tokens: 4096 });
    expect(budget('high')).to.deep.equal({ type: 'enabled', budget_tokens: 16384 });
    // xhigh's 32,768 is held to half of the model's 64,000.
    expect(budget('xhigh')).to.deep.equal({ type: 'enabled', budget_tokens: 32000 });
    expect(budget('high', 5000)).to.deep.equal({ type: 'enabled', budget_tokens: 2500 });
    expect(translate({ reasoning_effort: 'high' }, REASONING).dropped).to.deep.equal([]);
  });

  it('reasoning_effort is dropped by name wherever one of Anthropic’s thinking rules cannot hold', () => {
    const toolLoop = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'r' },
    ];
    const cases: [string, Json, TranslateOptions][] = [
      ['no reasoning on the model', {}, {}],
      ['budget below 1,024', { max_completion_tokens: 2047 }, REASONING],
      ['forced tool use', { tools: TOOLS, tool_choice: 'required' }, REASONING],
      ['a named tool forced', { tools: TOOLS, tool_choice: { type: 'function', function: { name: 'f' } } }, REASONING],
      ['temperature changed', { temperature: 0.2 }, REASONING],
      ['top_p below 0.95', { top_p: 0.5 }, REASONING],
      ['tool results in the history', { tools: TOOLS, messages: toolLoop }, REASONING],
    ];
    for (const [why, body, options] of cases) {
      const { request, dropped } = translate({ reasoning_effort: 'medium', ...body }, options);
      expect(request, why).to.not.have.property('thinking');
      expect(dropped, why).to.deep.equal(['reasoning_effort']);
    }
    // What the rules allow: auto tool choice, temperature 1, top_p from 0.95.
    const ok = translate({ reasoning_effort: 'low', tools: TOOLS, tool_choice: 'auto', temperature: 1, top_p: 0.95 }, REASONING);
    expect(ok.request.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
    // none asks for no reasoning, which is Messages' default: nothing sent, nothing named.
    const none = translate({ reasoning_effort: 'none' });
    expect(none.request).to.not.have.property('thinking');
    expect(none.dropped).to.deep.equal([]);
  });

  it("web_search_options becomes Anthropic's web search tool with the user location; the context size is dropped by name", () => {
    const { request, dropped } = translate({
      tools: TOOLS,
      web_search_options: { search_context_size: 'high', user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR' } } },
    });
    expect(request.tools).to.deep.equal([
      { name: 'f', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search', user_location: { type: 'approximate', city: 'Paris', country: 'FR' } },
    ]);
    expect(dropped).to.deep.equal(['web_search_options.search_context_size']);
    expect(translate({ web_search_options: {} }).request.tools).to.deep.equal([{ type: 'web_search_20250305', name: 'web_search' }]);
  });

  it('user becomes metadata.user_id, hashed (stable) when longer than the 256 Anthropic takes', () => {
    expect(translate({ user: 'u-1' }).request.metadata).to.deep.equal({ user_id: 'u-1' });
    const long = 'x'.repeat(300);
    expect(translate({ user: long }).request.metadata).to.deep.equal({ user_id: createHash('sha256').update(long).digest('base64url') });
  });

  it('Chat-only hints are dropped by name; their neutral values are passed over silently', () => {
    const { request, dropped } = translate({
      logit_bias: { '50256': -100 },
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      service_tier: 'flex',
      store: true,
      prediction: { type: 'content', content: 'x' },
      metadata: { a: 'b' },
      prompt_cache_key: 'k',
      safety_identifier: 's',
      verbosity: 'low',
      some_new_field: 1,
      parallel_tool_calls: false,
      stream_options: { include_usage: true },
    });
    expect(Object.keys(request).sort()).to.deep.equal(['max_tokens', 'messages', 'model']);
    expect(dropped).to.deep.equal([
      'logit_bias',
      'seed',
      'presence_penalty',
      'frequency_penalty',
      'service_tier',
      'store',
      'prediction',
      'metadata',
      'prompt_cache_key',
      'safety_identifier',
      'verbosity',
      'some_new_field',
    ]);
    const neutral = translate({
      n: 1,
      logprobs: false,
      presence_penalty: 0,
      frequency_penalty: 0,
      logit_bias: {},
      store: false,
      service_tier: 'auto',
    });
    expect(neutral.dropped).to.deep.equal([]);
  });

  it('n > 1, log probabilities, JSON mode without a schema and audio stay refusals naming the field', () => {
    for (const [body, field] of [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 3 }, 'top_logprobs'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    ] as const) {
      let err: AppError | undefined;
      try {
        translate(body);
      } catch (e) {
        err = e as AppError;
      }
      expect(err?.kind, field).to.equal('invalid_input');
      expect(err!.message.startsWith(`${field}:`), err!.message).to.equal(true);
    }
  });
});
