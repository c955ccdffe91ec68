import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import type { ParsedCall } from '../../../../proxy/call.js';
import { parseCall } from '../../../../proxy/wire/index.js';
import { AppError } from '../../../../shared/errors.js';
import { chatToMessages } from '../../../../proxy/wire/messages/request-from-chat.js';
import { messagesToChat } from '../../../../proxy/wire/messages/request-to-chat.js';
import { testConfig } from '../../../support/control-plane.js';

/**
 * A Messages client on a Chat Completions provider: any valid Messages
 * request survives the trip to Chat and back with every field both formats
 * have; any Chat answer comes back as a Messages answer that maps back to it;
 * and a streamed answer, cut anywhere, assembles to the same message as the
 * whole one. Requests come back through the other direction's translator
 * (a Chat client on a Messages provider), and so do answers.
 */

type Json = Record<string, unknown>;
const catalog = testConfig().models;
const model = catalog.models.get('tg/gpt-direct')!;
const messagesModel = catalog.models.get('tg/claude-direct')!;
const RUNS = 150;

// ---- random Messages requests ----

const text = fc.string({ minLength: 1, maxLength: 12 });
const toolName = fc.stringMatching(/^[a-z][a-z_]{0,9}$/);
const jsonObject = fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()), {
  maxKeys: 3,
});
const textBlock = text.map((t) => ({ type: 'text', text: t }));
const image = fc.oneof(
  fc.base64String({ minLength: 4, maxLength: 16 }).map((data) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } })),
  fc.webUrl().map((url) => ({ type: 'image', source: { type: 'url', url } })),
);
const userContent = fc.oneof(text, fc.array(fc.oneof(textBlock, image), { minLength: 1, maxLength: 3 }));

/** An assistant turn (text, then any tool calls, the only order Chat can say) and, if it called tools, the user turn answering them. */
const exchange = fc
  .record({
    texts: fc.array(textBlock, { maxLength: 2 }),
    calls: fc.uniqueArray(fc.record({ id: fc.stringMatching(/^toolu_[a-z0-9]{4}$/), name: toolName, input: jsonObject }), {
      maxLength: 2,
      selector: (c) => c.id,
    }),
    asString: fc.boolean(),
    results: fc.array(fc.oneof(text, fc.array(textBlock, { minLength: 1, maxLength: 2 })), { minLength: 2, maxLength: 2 }),
    followUp: fc.option(fc.array(fc.oneof(textBlock, image), { minLength: 1, maxLength: 2 }), { nil: undefined }),
  })
  .filter((x) => x.texts.length + x.calls.length > 0)
  .map(({ texts, calls, asString, results, followUp }) => {
    const turns: Json[] = [];
    if (calls.length === 0 && texts.length === 1 && asString) turns.push({ role: 'assistant', content: texts[0]!.text });
    else turns.push({ role: 'assistant', content: [...texts, ...calls.map((c) => ({ type: 'tool_use', ...c }))] });
    if (calls.length) {
      const blocks: Json[] = calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: results[i] }));
      turns.push({ role: 'user', content: [...blocks, ...(followUp ?? [])] });
    } else turns.push({ role: 'user', content: followUp ?? 'go on' });
    return turns;
  });

const tool = fc.record(
  { name: toolName, description: text, input_schema: fc.constant({ type: 'object', properties: { q: { type: 'string' } } }) },
  { requiredKeys: ['name', 'input_schema'] },
);

const messagesRequest = fc
  .record(
    {
      max_tokens: fc.integer({ min: 1, max: 4096 }),
      first: userContent,
      exchanges: fc.array(exchange, { maxLength: 3 }),
      system: fc.oneof(text, fc.array(textBlock, { minLength: 1, maxLength: 2 })),
      tools: fc.array(tool, { minLength: 1, maxLength: 3 }),
      tool_choice: fc.constantFrom('auto', 'any', 'none', 'tool'),
      disable_parallel: fc.boolean(),
      stop_sequences: fc.array(text, { minLength: 1, maxLength: 4 }),
      temperature: fc.double({ min: 0, max: 1, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      // Short ids pass as they are; Claude Code's are 150 characters, past the 64 a Chat `user` takes.
      user_id: fc.oneof(text, fc.string({ minLength: 65, maxLength: 160 })),
      stream: fc.boolean(),
      // What real agents send that Chat has no field for.
      mid_system: fc.oneof(text, fc.array(textBlock, { minLength: 1, maxLength: 2 })),
      thinking: fc.oneof(
        fc.integer({ min: 1024, max: 32000 }).map((budget) => ({ type: 'enabled', budget_tokens: budget })),
        fc.constant({ type: 'adaptive' }),
        fc.constant({ type: 'disabled' }),
      ),
      effort: fc.constantFrom('low', 'medium', 'high', 'max'),
      context_management: fc.constant({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] }),
      cache_control: fc.constant({ type: 'ephemeral' }),
      top_k: fc.integer({ min: 1, max: 100 }),
      metadata_extra: fc.stringMatching(/^[a-z]{1,6}$/).filter((k) => k !== 'user_id'),
    },
    { requiredKeys: ['max_tokens', 'first', 'exchanges'] },
  )
  .map((r) => {
    const messages: Json[] = [{ role: 'user', content: r.first }];
    if (r.mid_system !== undefined) messages.push({ role: 'system', content: r.mid_system });
    const body: Json = { model: 'tg/gpt-direct', max_tokens: r.max_tokens, messages: [...messages, ...r.exchanges.flat()] };
    if (r.system !== undefined) body.system = r.system;
    if (r.tools !== undefined) {
      body.tools = r.tools;
      if (r.tool_choice !== undefined) {
        const choice: Json = r.tool_choice === 'tool' ? { type: 'tool', name: r.tools[0]!.name } : { type: r.tool_choice };
        if (r.disable_parallel && r.tool_choice !== 'none') choice.disable_parallel_tool_use = true;
        body.tool_choice = choice;
      }
    }
    if (r.stop_sequences !== undefined) body.stop_sequences = r.stop_sequences;
    if (r.temperature !== undefined) body.temperature = r.temperature;
    if (r.top_p !== undefined) body.top_p = r.top_p;
    if (r.user_id !== undefined || r.metadata_extra !== undefined) {
      const metadata: Json = {};
      if (r.user_id !== undefined) metadata.user_id = r.user_id;
      if (r.metadata_extra !== undefined) metadata[r.metadata_extra] = 'x';
      body.metadata = metadata;
    }
    if (r.stream !== undefined) body.stream = r.stream;
    if (r.thinking !== undefined) body.thinking = r.thinking;
    if (r.effort !== undefined) body.output_config = { effort: r.effort };
    for (const key of ['context_management', 'cache_control', 'top_k'] as const) if (r[key] !== undefined) body[key] = r[key];
    return body;
  });

const EFFORTS: Record<string, string> = { low: 'low', medium: 'medium', high: 'high', max: 'high' };

/** The reasoning_effort a Chat provider should see: an explicit effort's, else a budget's nearest level (1,024 / 4,096 / 16,384). */
function expectedEffort(body: Json, reasoning: boolean): string | undefined {
  if (!reasoning) return undefined;
  const effort = (body.output_config as Json | undefined)?.effort as string | undefined;
  if (effort !== undefined) return EFFORTS[effort];
  const thinking = body.thinking as Json | undefined;
  if (thinking?.type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens as number;
  return budget < 2048 ? 'low' : budget < 8192 ? 'medium' : 'high';
}

/** The names the translation must report, worked out from the generated body alone. */
function expectedDrops(body: Json, reasoning: boolean, betas: string[]): string[] {
  const out: string[] = [];
  if ((body.thinking as Json | undefined)?.type !== undefined && (body.thinking as Json).type !== 'disabled' && !reasoning) out.push('thinking');
  if (body.output_config !== undefined && !reasoning) out.push('output_config.effort');
  for (const key of ['context_management', 'cache_control', 'top_k']) if (body[key] !== undefined) out.push(key);
  for (const key of Object.keys((body.metadata as Json | undefined) ?? {})) if (key !== 'user_id') out.push(`metadata.${key}`);
  const kept = ['claude-code-20250219', 'mid-conversation-system-2026-04-07'];
  const keptWithReasoning = ['effort-2025-11-24', 'interleaved-thinking-2025-05-14'];
  const reasoningKept = expectedEffort(body, reasoning) !== undefined || (reasoning && (body.thinking as Json | undefined)?.type === 'adaptive');
  for (const beta of betas) if (!kept.includes(beta) && !(reasoningKept && keptWithReasoning.includes(beta))) out.push(`anthropic-beta:${beta}`);
  return out;
}

const betaList = fc.subarray([
  'claude-code-20250219',
  'mid-conversation-system-2026-04-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'interleaved-thinking-2025-05-14',
  'prompt-caching-2024-07-31',
]);

function parsed(body: Json): ParsedCall {
  return parseCall('messages', Buffer.from(JSON.stringify(body)), { 'anthropic-version': '2023-06-01' });
}

/** What both formats can say: a string content is one text block, a tool result's text one string, consecutive user turns one turn (Anthropic joins them), stream false no stream. */
function normal(body: Json): Json {
  const norm = structuredClone(body);
  delete norm.model;
  // Dropped on the way to Chat (named, and checked apart), or not comparable after it.
  for (const key of ['thinking', 'output_config', 'context_management', 'cache_control', 'top_k']) delete norm[key];
  const metadata = norm.metadata as Json | undefined;
  if (metadata !== undefined) {
    if (typeof metadata.user_id === 'string') norm.metadata = { user_id: chatUser(metadata.user_id) };
    else delete norm.metadata;
  }
  if (typeof norm.system === 'string') norm.system = [{ type: 'text', text: norm.system }];
  // Messages has one system prompt: system turns given mid-conversation join it, in order.
  const system = (norm.system as Json[] | undefined) ?? [];
  for (const m of norm.messages as Json[]) {
    if (m.role === 'system') system.push(...(typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Json[])));
  }
  if (system.length) norm.system = system;
  const turns: Json[] = [];
  for (const m of (norm.messages as Json[]).filter((x) => x.role !== 'system')) {
    const content = (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Json[])).map((b) =>
      b.type === 'tool_result' && typeof b.content !== 'string' ? { ...b, content: (b.content as Json[]).map((t) => t.text).join('') } : b,
    );
    const last = turns.at(-1);
    if (last !== undefined && last.role === 'user' && m.role === 'user') (last.content as Json[]).push(...content);
    else turns.push({ role: m.role, content });
  }
  norm.messages = turns;
  if (norm.stream === false) delete norm.stream;
  return norm;
}

/** A Chat `user` from a Messages user id: as it is up to 64 characters, else its SHA-256 in base64url. */
function chatUser(id: string): string {
  return id.length <= 64 ? id : createHash('sha256').update(id).digest('base64url');
}

describe('property: Messages request → Chat Completions → back keeps every field both formats have', () => {
  it('random valid Messages requests round-trip', () => {
    fc.assert(
      fc.property(messagesRequest, fc.boolean(), betaList, (body, reasoning, betas) => {
        const { request: chat, dropped } = messagesToChat.translate(parsed(body), model, { reasoning, betas });
        expect(chat.model).to.equal(model.upstream_model);
        expect(chat.reasoning_effort).to.equal(expectedEffort(body, reasoning));
        expect(dropped).to.have.members(expectedDrops(body, reasoning, betas));
        expect((chat.user as string | undefined)?.length ?? 0).to.be.at.most(64);
        // A Chat client's stream must ask for usage, or the proxy could not bill it.
        if (body.stream === true) expect(chat.stream_options).to.deep.equal({ include_usage: true });
        // Back through the other direction's translator, as a Chat client's call to a Messages provider.
        const { request: back } = chatToMessages.translate(
          parseCall('chat', Buffer.from(JSON.stringify({ ...chat, model: 'tg/claude-direct' })), {}),
          messagesModel,
        );
        // Whether reasoning comes back as thinking depends on the Chat side's own rules, which its property checks.
        delete back.thinking;
        expect(normal(back)).to.deep.equal(normal(body));
      }),
      { numRuns: RUNS },
    );
  });
});

describe('property: any Messages request JSON translates or is refused as invalid input', () => {
  it('never another error, whatever the new fields hold', () => {
    const anyMessage = fc.record(
      { role: fc.oneof(fc.constantFrom('system', 'user', 'assistant'), fc.jsonValue()), content: fc.jsonValue() },
      { requiredKeys: ['role'] },
    );
    const anyBody = fc.record(
      {
        messages: fc.array(anyMessage, { minLength: 1, maxLength: 4 }),
        system: fc.jsonValue(),
        thinking: fc.oneof(
          fc.jsonValue(),
          fc.record({ type: fc.constantFrom('enabled', 'adaptive', 'disabled', 'x'), budget_tokens: fc.jsonValue() }),
        ),
        output_config: fc.oneof(fc.jsonValue(), fc.record({ effort: fc.jsonValue(), format: fc.jsonValue() })),
        metadata: fc.jsonValue(),
        tools: fc.oneof(fc.jsonValue(), fc.array(fc.record({ type: fc.jsonValue(), name: fc.jsonValue(), user_location: fc.jsonValue() }))),
        tool_choice: fc.jsonValue(),
        context_management: fc.jsonValue(),
        cache_control: fc.jsonValue(),
      },
      { requiredKeys: ['messages'] },
    );
    fc.assert(
      fc.property(anyBody, fc.boolean(), (body, reasoning) => {
        try {
          messagesToChat.translate(parsed({ model: 'tg/gpt-direct', max_tokens: 10, ...body }), model, { reasoning, betas: ['x'] });
        } catch (err) {
          expect(err).to.be.instanceOf(AppError);
          expect((err as AppError).kind).to.equal('invalid_input');
        }
      }),
      { numRuns: 500 },
    );
  });
});

// ---- random Chat answers ----

const toolCall = fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{4}$/), name: toolName, input: jsonObject });
const chatAnswer = fc
  .record({
    content: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: null }),
    calls: fc.uniqueArray(toolCall, { maxLength: 3, selector: (c) => c.id }),
    finish: fc.constantFrom('stop', 'length', 'content_filter'),
    prompt: fc.nat(5000),
    cachedShare: fc.double({ min: 0, max: 1, noNaN: true }),
    completion: fc.nat(5000),
  })
  .filter((a) => a.content !== null || a.calls.length > 0)
  .map((a) => ({ ...a, cached: Math.floor(a.prompt * a.cachedShare), finish: a.calls.length ? 'tool_calls' : a.finish }));
type ChatAnswer = typeof chatAnswer extends fc.Arbitrary<infer T> ? T : never;

function completion(a: ChatAnswer): Json {
  const message: Json = { role: 'assistant', content: a.content };
  if (a.calls.length)
    message.tool_calls = a.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }));
  return {
    id: 'chatcmpl-p',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: a.finish }],
    usage: { prompt_tokens: a.prompt, completion_tokens: a.completion, prompt_tokens_details: { cached_tokens: a.cached } },
  };
}

const chatCall = parseCall('chat', Buffer.from(JSON.stringify({ model: 'tg/claude-direct', messages: [] })), {});

/** A Messages answer back into a completion through the other direction's translator, keeping the fields `completion` gives. */
function chatFromMessage(m: Json): Json {
  const back = JSON.parse(
    chatToMessages
      .answer(chatCall)
      .json(Buffer.from(JSON.stringify(m)))
      .toString(),
  ) as Json;
  const choice = (back.choices as Json[])[0]!;
  const message = choice.message as Json;
  const kept: Json = { role: message.role, content: message.content };
  if (message.tool_calls) kept.tool_calls = message.tool_calls;
  const u = back.usage as Json;
  return {
    id: 'chatcmpl-p',
    object: back.object,
    choices: [{ index: 0, message: kept, finish_reason: choice.finish_reason }],
    usage: { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, prompt_tokens_details: u.prompt_tokens_details },
  };
}

/** The chunks a Chat stream sends for the same answer: content and arguments in pieces, then finish, usage and [DONE]. */
function chunks(a: ChatAnswer, cuts: number[]): string {
  const head = { id: 'chatcmpl-p', object: 'chat.completion.chunk' };
  const out: Json[] = [{ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
  const pieces = (s: string) => {
    const at = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((x, y) => x - y);
    const parts: string[] = [];
    let from = 0;
    for (const c of [...at, s.length]) if (c > from) parts.push(s.slice(from, (from = c)));
    return parts;
  };
  if (a.content) for (const p of pieces(a.content)) out.push({ ...head, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] });
  a.calls.forEach((c, index) => {
    out.push({
      ...head,
      choices: [
        { index: 0, delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, finish_reason: null },
      ],
    });
    for (const p of pieces(JSON.stringify(c.input)))
      out.push({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: p } }] }, finish_reason: null }] });
  });
  out.push({ ...head, choices: [{ index: 0, delta: {}, finish_reason: a.finish }] });
  out.push({ ...head, choices: [], usage: completion(a).usage as Json });
  return `${out.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** Assembles a Messages event stream into its final message, as the SDKs do. */
function assemble(sse: string): Json {
  let message: Json = {};
  const partial: string[] = [];
  for (const frame of sse.split('\n\n').filter(Boolean)) {
    const data = JSON.parse(frame.split('\n')[1]!.slice('data: '.length)) as Json;
    const content = message.content as Json[];
    switch (data.type) {
      case 'message_start':
        message = structuredClone(data.message as Json);
        break;
      case 'content_block_start':
        content[data.index as number] = structuredClone(data.content_block as Json);
        partial[data.index as number] = '';
        break;
      case 'content_block_delta': {
        const d = data.delta as Json;
        const block = content[data.index as number]!;
        if (d.type === 'text_delta') block.text = `${block.text as string}${d.text as string}`;
        else partial[data.index as number] += d.partial_json as string;
        break;
      }
      case 'content_block_stop': {
        const block = content[data.index as number]!;
        if (block.type === 'tool_use') block.input = partial[data.index as number] ? JSON.parse(partial[data.index as number]!) : {};
        break;
      }
      case 'message_delta':
        Object.assign(message, data.delta);
        message.usage = { ...(message.usage as Json), ...(data.usage as Json) };
        break;
      case 'error':
        throw new Error(`error event: ${JSON.stringify(data)}`);
    }
  }
  return message;
}

describe('property: Chat Completions answers → Messages answers', () => {
  const call = parsed({ model: 'tg/gpt-direct', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
  const wholeAnswer = (a: ChatAnswer) =>
    JSON.parse(
      messagesToChat
        .answer(call)
        .json(Buffer.from(JSON.stringify(completion(a))))
        .toString(),
    ) as Json;

  it('a whole answer maps back to the same completion: text, tool calls and their input, finish reason, usage with cached tokens', () => {
    fc.assert(
      fc.property(chatAnswer, (a) => {
        const m = wholeAnswer(a);
        expect(m.model).to.equal('tg/gpt-direct');
        expect(chatFromMessage(m)).to.deep.equal(completion(a));
      }),
      { numRuns: RUNS },
    );
  });

  it('a streamed answer, cut into any pieces on the wire, assembles to the same message as the whole answer', () => {
    fc.assert(
      fc.property(
        chatAnswer,
        fc.array(fc.nat(200), { maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 20 }),
        (a, cuts, sizes) => {
          const whole = wholeAnswer(a);
          const t = messagesToChat.answer(call);
          const wire = Buffer.from(chunks(a, cuts));
          let out = '';
          for (let at = 0, i = 0; at < wire.length; at += sizes[i++ % sizes.length]!)
            out += t.push(wire.subarray(at, at + sizes[i % sizes.length]!)).toString();
          out += t.end().toString();
          expect(assemble(out)).to.deep.equal(whole);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
