import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseCall } from '../../../../../proxy/wire/index.js';
import { anthropicBetas } from '../../../../../proxy/translate/betas.js';
import { messagesToChat } from '../../../../../proxy/wire/messages/request-to-chat.js';
import { testConfig } from '../../../../support/control-plane.js';

/**
 * Claude Code's first call (2.1.x, `claude -p`, default settings), as seen on
 * the wire: a system message in the middle of `messages`, adaptive thinking,
 * context management, an effort level, a 150-character user id, cache
 * breakpoints and its beta list. On a Chat Completions provider it must
 * translate without a refusal, dropping (and naming) only what the provider
 * cannot honour.
 */

const CC = { type: 'ephemeral' };
const USER_ID = `user_${'0123456789abcdef'.repeat(4)}_account_${'7c1e2a34-5b6d-4e8f-9a0b-1c2d3e4f5a6b'}_session_${'0f9e8d7c-6b5a-4948-3726-150493827160'}`;
const HEADERS = {
  'anthropic-version': '2023-06-01',
  'anthropic-beta':
    'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-system-2026-04-07,effort-2025-11-24',
};
const BODY = {
  model: 'tg/gpt-direct',
  max_tokens: 32000,
  stream: true,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: CC },
    { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks.', cache_control: CC },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'List the files here.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run ls.', signature: 'EqQBCkgIBhABGAIiQ…' },
        { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'README.md\nsrc', cache_control: CC }] },
    { role: 'system', content: '<system-reminder>The user switched to plan mode.</system-reminder>' },
    { role: 'user', content: [{ type: 'text', text: 'And what is in src?', cache_control: CC }] },
  ],
  tools: [
    {
      name: 'Bash',
      description: 'Runs a shell command.',
      input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
    {
      name: 'Read',
      description: 'Reads a file.',
      input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
      cache_control: CC,
    },
  ],
  metadata: { user_id: USER_ID },
  thinking: { type: 'adaptive' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'high' },
};

const model = testConfig().models.models.get('tg/gpt-direct')!;
const call = () => parseCall('messages', Buffer.from(JSON.stringify(BODY)), HEADERS);
const betas = anthropicBetas(HEADERS['anthropic-beta']);

describe("translation: Claude Code's default request on a Chat Completions provider", () => {
  it('the beta header reads as its list of features', () => {
    expect(USER_ID.length).to.be.greaterThan(140);
    expect(betas).to.have.length(5);
    expect(anthropicBetas(['a, b', ' b ,c', ''])).to.deep.equal(['a', 'b', 'c']);
    expect(anthropicBetas(undefined)).to.deep.equal([]);
  });

  it('translates without a refusal on a model without reasoning, naming every drop', () => {
    const { request, dropped } = messagesToChat.translate(call(), model, { betas });
    expect(dropped).to.have.members([
      'cache_control',
      'messages[thinking]',
      'context_management',
      'thinking',
      'output_config.effort',
      'anthropic-beta:interleaved-thinking-2025-05-14',
      'anthropic-beta:context-management-2025-06-27',
      'anthropic-beta:effort-2025-11-24',
    ]);
    expect(request).to.not.have.property('reasoning_effort');
    const messages = request.messages as Record<string, unknown>[];
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool', 'system', 'user']);
    expect(messages[4]).to.deep.equal({ role: 'system', content: '<system-reminder>The user switched to plan mode.</system-reminder>' });
    expect((request.user as string).length).to.be.at.most(64);
    expect(request.max_tokens).to.equal(model.max_output_tokens);
    expect(JSON.stringify(request)).to.not.include('cache_control');
  });

  it('on a reasoning model its effort reaches the provider as reasoning_effort, and the reasoning betas are kept', () => {
    const { request, dropped } = messagesToChat.translate(call(), model, { betas, reasoning: true });
    expect(request.reasoning_effort).to.equal('high');
    expect(dropped).to.have.members(['cache_control', 'messages[thinking]', 'context_management', 'anthropic-beta:context-management-2025-06-27']);
  });
});

/** A captured request of the real client (test/fixtures/captures), aimed at a Chat-only alias. */
function captured(file: string, index: number): { call: ReturnType<typeof parseCall>; betas: string[] } {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '../../../../fixtures/captures', file), 'utf8')) as {
    requests: { path: string; headers: Record<string, string>; body: Record<string, unknown> }[];
  };
  const sent = fixture.requests.filter((r) => r.path.endsWith('/v1/messages'))[index]!;
  // The fixture scrubs ids to `<hex>`/`<uuid>`; the real ones are put back so the user id has its real length (~130).
  const text = JSON.stringify({ ...sent.body, model: 'tg/gpt-direct' })
    .replaceAll('<hex>', '0123456789abcdef'.repeat(4))
    .replaceAll('<uuid>', '7c1e2a34-5b6d-4e8f-9a0b-1c2d3e4f5a6b');
  const body = JSON.parse(text) as Record<string, unknown>;
  return { call: parseCall('messages', Buffer.from(JSON.stringify(body)), sent.headers), betas: anthropicBetas(sent.headers['anthropic-beta']) };
}

describe('translation: the captured Claude Code 2.1.332 requests on a Chat Completions provider', () => {
  it('its first turn translates: the JSON-string user id becomes a stable short user, the system turn stays in place', () => {
    const { call: first, betas: sentBetas } = captured('claude-code.json', 0);
    const userId = (first.body.metadata as { user_id: string }).user_id;
    expect(JSON.parse(userId)).to.have.property('session_id');
    expect(userId.length).to.be.greaterThan(100);
    const { request, dropped } = messagesToChat.translate(first, model, { betas: sentBetas });
    const again = messagesToChat.translate(first, model, { betas: sentBetas }).request;
    expect(request.user).to.be.a('string').with.length.at.most(64);
    expect(request.user).to.equal(again.user);
    expect(request.user).to.not.include('session_id');
    const roles = (request.messages as { role: string }[]).map((m) => m.role);
    expect(roles[0]).to.equal('system');
    expect(roles.slice(1)).to.include('system');
    expect(dropped).to.include.members(['cache_control', 'context_management', 'thinking', 'output_config.effort', 'tools.defer_loading']);
    expect(JSON.stringify(request)).to.not.include('cache_control');
  });

  it('its second turn (a Read tool result, the system turn as a plain string) translates into a tool message', () => {
    const { call: second, betas: sentBetas } = captured('claude-code-tool.json', 1);
    const { request } = messagesToChat.translate(second, model, { betas: sentBetas });
    const messages = request.messages as { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    const asked = messages.find((m) => m.role === 'assistant' && m.tool_calls)!;
    const answered = messages.find((m) => m.role === 'tool')!;
    expect(answered.tool_call_id).to.equal(asked.tool_calls![0]!.id);
  });
});
