import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { AppError } from '../../../../shared/errors.js';
import { modelFromEntry, type ModelConfig } from '../../../../shared/models.js';
import { parseCall } from '../../../../proxy/wire/index.js';
import { chatToMessages } from '../../../../proxy/wire/messages/request-from-chat.js';
import { chatRequest as messagesRequestToChat } from '../../../../proxy/wire/messages/request-to-chat.js';
import { messageJson, messagesAnswer, streamThrough } from '../../../support/messages-answers.js';

/**
 * A Chat Completions client on a Messages provider: random valid requests
 * translate to Messages and back (through an inverse written here) with every
 * field both formats have intact; random Messages answers come back as the
 * same Chat Completions answer whether whole or streamed in any byte split.
 */
type Json = Record<string, unknown>;

const MODEL: ModelConfig = modelFromEntry({
  alias: 'tg/claude-direct',
  provider: 'messages-only',
  upstream_model: 'claude-sonnet-4-5',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 64000,
});

const text = fc.string({ minLength: 1, maxLength: 20 });
const id = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/);
const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
// Round-tripped because these objects only ever arrive as JSON text, which has no -0 (fc.jsonValue can yield it).
const jsonObject = fc.dictionary(name, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((o) => JSON.parse(JSON.stringify(o)) as Json);

const image = fc
  .oneof(
    fc.webUrl({ validSchemes: ['https'] }),
    fc
      .tuple(fc.constantFrom('image/png', 'image/jpeg', 'image/webp'), fc.base64String({ minLength: 4, maxLength: 16 }))
      .map(([t, d]) => `data:${t};base64,${d}`),
  )
  .map((url) => ({ type: 'image_url', image_url: { url } }));
const userContent = fc.oneof(
  text,
  fc.array(
    fc.oneof(
      text.map((t) => ({ type: 'text', text: t })),
      image,
    ),
    { minLength: 1, maxLength: 3 },
  ),
);
const toolCall = fc.record({ id, type: fc.constant('function'), function: fc.record({ name, arguments: jsonObject.map((o) => JSON.stringify(o)) }) });

/** An assistant turn: text, or tool calls (with or without text) answered by one tool message each. */
const assistantTurn = fc.oneof(
  text.map((t) => [{ role: 'assistant', content: t }]),
  fc
    .tuple(
      fc.option(text, { nil: null }),
      fc.uniqueArray(toolCall, { minLength: 1, maxLength: 3, selector: (c) => c.id }),
      fc.array(text, { minLength: 3, maxLength: 3 }),
    )
    .map(([content, calls, results]) => [
      { role: 'assistant', content, tool_calls: calls },
      ...calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: results[i]! })),
    ]),
);
const conversation = fc
  .tuple(fc.option(text, { nil: undefined }), fc.array(fc.tuple(userContent, assistantTurn), { maxLength: 3 }), userContent)
  .map(([system, exchanges, last]) => [
    ...(system === undefined ? [] : [{ role: 'system', content: system }]),
    ...exchanges.flatMap(([user, assistant]) => [{ role: 'user', content: user }, ...assistant]),
    { role: 'user', content: last },
  ]);

const tool = fc.record({
  type: fc.constant('function'),
  function: fc.record({ name, description: text, parameters: fc.record({ type: fc.constant('object'), properties: jsonObject }) }),
});
const toolsAndChoice = fc.option(
  fc
    .tuple(fc.array(tool, { minLength: 1, maxLength: 3 }), fc.constantFrom('auto', 'none', 'required', 'named'), fc.boolean())
    .map(([tools, choice, parallel]) => {
      const out: Json = { tools, tool_choice: choice === 'named' ? { type: 'function', function: { name: tools[0]!.function.name } } : choice };
      if (!parallel && choice !== 'none') out.parallel_tool_calls = false;
      return out;
    }),
  { nil: undefined },
);

const chatRequest = fc
  .record(
    {
      messages: conversation,
      max_tokens: fc.integer({ min: 1, max: 64000 }),
      temperature: fc.double({ min: 0, max: 1, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      stop: fc.array(text, { minLength: 1, maxLength: 4 }),
      // Up to 64 characters for OpenAI, up to 256 for Anthropic, longer from clients of neither.
      user: fc.oneof(text, fc.string({ minLength: 65, maxLength: 256 }), fc.string({ minLength: 257, maxLength: 300 })),
      stream: fc.boolean(),
      reasoning_effort: fc.constantFrom('none', 'minimal', 'low', 'medium', 'high', 'xhigh'),
      web_search_options: fc.record(
        {
          search_context_size: fc.constantFrom('low', 'medium', 'high'),
          user_location: fc.record({
            type: fc.constant('approximate'),
            approximate: fc.record({ city: text, region: text, country: text, timezone: text }, { requiredKeys: [] }),
          }),
        },
        { requiredKeys: [] },
      ),
      // Chat-only hints Messages has no field for: dropped and named.
      seed: fc.integer(),
      presence_penalty: fc.double({ min: 0.1, max: 2, noNaN: true }),
      logit_bias: fc.constant({ '50256': -100 }),
      prompt_cache_key: text,
      response_format: fc.record({
        type: fc.constant('json_schema'),
        json_schema: fc.record({ name, schema: fc.record({ type: fc.constant('object'), properties: jsonObject }) }),
      }),
    },
    { requiredKeys: ['messages', 'max_tokens'] },
  )
  .chain((r) => toolsAndChoice.map((t) => ({ model: MODEL.alias, ...r, ...t })));

function call(body: Json) {
  return parseCall('chat', Buffer.from(JSON.stringify(body)), {});
}

/** Hints the translation drops (by name), never compared after a round trip. */
const HINTS = ['seed', 'presence_penalty', 'logit_bias', 'prompt_cache_key'];

const BUDGETS: Record<string, number> = { minimal: 1024, low: 1024, medium: 4096, high: 16384, xhigh: 32768 };

/**
 * The thinking Anthropic should see for this request on a model that reasons
 * or not: only where each of its rules holds (a budget of 1,024 up to half of
 * max_tokens, no forced tool, temperature 1 or unset, top_p ≥ 0.95, no tool
 * result in the history), else none.
 */
function expectedThinking(body: Json, reasoning: boolean): Json | undefined {
  const effort = body.reasoning_effort as string | undefined;
  if (!reasoning || effort === undefined || effort === 'none') return undefined;
  const forced = body.tool_choice === 'required' || typeof body.tool_choice === 'object';
  const sampled = (body.temperature !== undefined && body.temperature !== 1) || (body.top_p !== undefined && (body.top_p as number) < 0.95);
  const toolResults = (body.messages as Json[]).some((m) => m.role === 'tool');
  const budget = Math.min(BUDGETS[effort]!, Math.floor(Math.min(body.max_tokens as number, MODEL.max_output_tokens) / 2));
  if (forced || sampled || toolResults || budget < 1024) return undefined;
  return { type: 'enabled', budget_tokens: budget };
}

/** The names the translation must report, from the generated body alone. */
function expectedDrops(body: Json, reasoning: boolean): string[] {
  const out = HINTS.filter((h) => body[h] !== undefined);
  const effort = body.reasoning_effort;
  if (effort !== undefined && effort !== 'none' && expectedThinking(body, reasoning) === undefined) out.push('reasoning_effort');
  if ((body.web_search_options as Json | undefined)?.search_context_size !== undefined) out.push('web_search_options.search_context_size');
  return out;
}

function cappedUser(id: string, max: number): string {
  return id.length <= max ? id : createHash('sha256').update(id).digest('base64url');
}

/** Messages → Chat Completions, written independently of the proxy's translator. */
function inverse(m: Json): Json {
  const out: Json = { model: MODEL.alias, max_tokens: m.max_tokens };
  const messages: Json[] = [];
  if (typeof m.system === 'string') messages.push({ role: 'system', content: m.system });
  for (const turn of m.messages as Json[]) {
    if (typeof turn.content === 'string') {
      messages.push({ role: turn.role, content: turn.content });
      continue;
    }
    const blocks = turn.content as Json[];
    if (turn.role === 'assistant') {
      const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text as string);
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } }));
      messages.push({ role: 'assistant', content: texts.length ? texts.join('') : null, tool_calls: calls });
      continue;
    }
    if (blocks.every((b) => b.type === 'tool_result')) {
      for (const b of blocks) messages.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.content });
      continue;
    }
    messages.push({
      role: 'user',
      content: blocks.map((b) => {
        if (b.type === 'text') return { type: 'text', text: b.text };
        const source = b.source as Json;
        return {
          type: 'image_url',
          image_url: { url: source.type === 'url' ? source.url : `data:${String(source.media_type)};base64,${String(source.data)}` },
        };
      }),
    });
  }
  out.messages = messages;
  for (const field of ['temperature', 'top_p']) if (m[field] !== undefined) out[field] = m[field];
  if (m.stop_sequences !== undefined) out.stop = m.stop_sequences;
  if (m.metadata !== undefined) out.user = (m.metadata as Json).user_id;
  if (m.stream !== undefined) out.stream = m.stream;
  const format = (m.output_config as Json | undefined)?.format as Json | undefined;
  // The schema's name never reaches the model; the inverse names it as the client did so the trip compares whole.
  if (format) out.response_format = { type: 'json_schema', json_schema: { name: NAME_KEPT_BY_CLIENT, schema: format.schema } };
  if (m.tools !== undefined) {
    const tools = (m.tools as Json[]).filter((t) => t.type !== 'web_search_20250305');
    const search = (m.tools as Json[]).find((t) => t.type === 'web_search_20250305');
    if (tools.length)
      out.tools = tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } }));
    if (search) {
      const { type: _type, ...approximate } = (search.user_location as Json | undefined) ?? {};
      out.web_search_options = search.user_location ? { user_location: { type: 'approximate', approximate } } : {};
    }
  }
  const choice = m.tool_choice as Json | undefined;
  if (choice) {
    out.tool_choice =
      choice.type === 'any' ? 'required' : choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
    if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  }
  return out;
}

const NAME_KEPT_BY_CLIENT = 'schema';

/** A generated request in the form the inverse writes it back (tool-call arguments as compact JSON, the schema's name the inverse's). */
function normalized(body: Json): Json {
  body = { ...body };
  // Dropped by name (checked apart), or translated with a loss the property checks on its own.
  for (const key of [...HINTS, 'reasoning_effort']) delete body[key];
  if (typeof body.user === 'string') body.user = cappedUser(body.user, 256);
  const search = body.web_search_options as Json | undefined;
  if (search) {
    const { search_context_size: _size, ...kept } = search;
    body.web_search_options = kept;
  }
  const messages = (body.messages as Json[]).map((m) => {
    if (!Array.isArray(m.tool_calls)) return m;
    const calls = (m.tool_calls as Json[]).map((c) => {
      const fn = c.function as Json;
      return { ...c, function: { name: fn.name, arguments: JSON.stringify(JSON.parse(fn.arguments as string)) } };
    });
    return { ...m, tool_calls: calls };
  });
  const out: Json = { ...body, messages };
  if (out.stream === false) delete out.stream;
  const format = out.response_format as { json_schema: Json } | undefined;
  if (format) out.response_format = { ...format, json_schema: { ...format.json_schema, name: NAME_KEPT_BY_CLIENT } };
  return out;
}

describe('translation property: Chat Completions requests → Messages → back', () => {
  it('loses no field both formats have', () => {
    fc.assert(
      fc.property(chatRequest, fc.boolean(), (body, reasoning) => {
        const { request: translated, dropped } = chatToMessages.translate(call(body), MODEL, { reasoning });
        expect(translated.model).to.equal(MODEL.upstream_model);
        const thinking = translated.thinking;
        expect(thinking).to.deep.equal(expectedThinking(body, reasoning));
        expect(dropped).to.have.members(expectedDrops(body, reasoning));
        delete translated.thinking;
        // The JSON round trip is what the provider receives.
        const sent = JSON.parse(JSON.stringify(translated)) as Json;
        // Compared with the request as it went over the wire too (JSON has no -0).
        expect(inverse(sent)).to.deep.equal(normalized(JSON.parse(JSON.stringify(body)) as Json));
      }),
      { numRuns: 300 },
    );
  });

  it('comes back through the proxy’s own Messages → Chat translator with every field both formats have', () => {
    fc.assert(
      fc.property(chatRequest, fc.boolean(), (body, reasoning) => {
        const messages = JSON.stringify({ ...chatToMessages.translate(call(body), MODEL, { reasoning }).request, model: MODEL.alias });
        const back = messagesRequestToChat(parseCall('messages', Buffer.from(messages), { 'anthropic-version': '2023-06-01' }), MODEL, {
          reasoning,
        }).request;
        const expected = normalized(JSON.parse(JSON.stringify(body)) as Json);
        expected.model = MODEL.upstream_model;
        // A long user id comes back as its hash; held to 64 characters on the Chat side.
        if (typeof expected.user === 'string') expected.user = cappedUser(expected.user, 64);
        // Reasoning that held Anthropic's rules comes back at the level of the budget it became.
        const thinking = expectedThinking(body, reasoning);
        if (thinking) {
          const budget = thinking.budget_tokens as number;
          expected.reasoning_effort = budget < 2048 ? 'low' : budget < 8192 ? 'medium' : 'high';
        }
        const search = expected.web_search_options as Json | undefined;
        if (search?.user_location) {
          const location = search.user_location as Json;
          expected.web_search_options = { user_location: { type: 'approximate', approximate: location.approximate } };
        }
        // A Chat stream reports usage only when asked; the proxy always asks.
        if (expected.stream === true) expected.stream_options = { include_usage: true };
        // Messages has no schema name or strict flag: the way back names it and holds the answer to it, as Messages does.
        const format = expected.response_format as { json_schema: Json } | undefined;
        if (format)
          expected.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.json_schema.schema, strict: true } };
        expect(JSON.parse(JSON.stringify(back))).to.deep.equal(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('without a client limit, max_tokens is the model ceiling; with one, the client’s up to that ceiling', () => {
    fc.assert(
      fc.property(conversation, fc.option(fc.integer({ min: 1, max: 100000 }), { nil: undefined }), (messages, limit) => {
        const body: Json = { model: MODEL.alias, messages };
        if (limit !== undefined) body.max_completion_tokens = limit;
        expect(chatToMessages.request(call(body), MODEL).max_tokens).to.equal(Math.min(limit ?? MODEL.max_output_tokens, MODEL.max_output_tokens));
      }),
    );
  });

  it('any JSON a client sends either translates or is refused as invalid input, never another error', () => {
    const anyMessage = fc.record(
      {
        role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function'), fc.jsonValue()),
        content: fc.jsonValue(),
        tool_calls: fc.jsonValue(),
        tool_call_id: fc.jsonValue(),
      },
      { requiredKeys: ['role'] },
    );
    const anyBody = fc.record(
      {
        messages: fc.array(anyMessage, { maxLength: 4 }),
        tools: fc.jsonValue(),
        tool_choice: fc.jsonValue(),
        stop: fc.jsonValue(),
        user: fc.jsonValue(),
        n: fc.jsonValue(),
        response_format: fc.jsonValue(),
        reasoning_effort: fc.jsonValue(),
        web_search_options: fc.jsonValue(),
        temperature: fc.jsonValue(),
        extra: fc.jsonValue(),
      },
      { requiredKeys: ['messages'] },
    );
    fc.assert(
      fc.property(anyBody, fc.boolean(), (body, reasoning) => {
        try {
          chatToMessages.translate(call({ model: MODEL.alias, ...body }), MODEL, { reasoning });
        } catch (err) {
          expect(err).to.be.instanceOf(AppError);
          expect((err as AppError).kind).to.equal('invalid_input');
        }
      }),
      { numRuns: 500 },
    );
  });
});

/* ---- answers ---- */

/** Chat chunks → one completion, as the openai SDK's stream helper assembles them. */
function assemble(sse: string): { message: Json; finish: unknown; usage: unknown; done: boolean; ids: Set<unknown> } {
  let content: string | null = null;
  const calls: Json[] = [];
  let finish: unknown = null;
  let use: unknown;
  let done = false;
  const ids = new Set<unknown>();
  for (const frame of sse.split('\n\n')) {
    if (!frame) continue;
    expect(frame.startsWith('data: ')).to.equal(true);
    const data = frame.slice(6);
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const chunk = JSON.parse(data) as Json;
    expect(chunk.object).to.equal('chat.completion.chunk');
    ids.add(chunk.id);
    if (chunk.usage) use = chunk.usage;
    for (const choice of chunk.choices as Json[]) {
      const delta = choice.delta as Json;
      if (typeof delta.content === 'string' && (delta.content !== '' || content !== null)) content = (content ?? '') + delta.content;
      for (const tc of (delta.tool_calls as Json[] | undefined) ?? []) {
        const fn = tc.function as Json;
        const index = tc.index as number;
        if (tc.id) calls[index] = { id: tc.id, type: 'function', function: { name: fn.name, arguments: '' } };
        const assembled = calls[index]!.function as { arguments: string };
        assembled.arguments += fn.arguments as string;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  const message: Json = { role: 'assistant', content, refusal: null };
  if (calls.length) message.tool_calls = calls;
  return { message, finish, usage: use, done, ids };
}

describe('translation property: Messages answers → Chat Completions', () => {
  it('a whole answer keeps its text, tool calls (arguments as JSON of the input), ids, usage and the alias', () => {
    fc.assert(
      fc.property(messagesAnswer, (a) => {
        const t = chatToMessages.answer(call({ model: MODEL.alias, messages: [] }));
        const out = JSON.parse(t.json(Buffer.from(messageJson(a))).toString()) as Json;
        expect(out).to.include({ id: a.id, object: 'chat.completion', model: MODEL.alias });
        const choice = (out.choices as Json[])[0]!;
        const message = choice.message as Json;
        expect(message.content).to.equal(a.text ?? null);
        const calls = (message.tool_calls as Json[] | undefined) ?? [];
        expect(calls.map((c) => [c.id, (c.function as Json).name, JSON.parse((c.function as Json).arguments as string)])).to.deep.equal(
          a.tools.map((x) => [x.id, x.name, x.input]),
        );
        expect(choice.finish_reason).to.equal(
          { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls' }[a.stop_reason],
        );
        const prompt = a.usage.input_tokens + a.usage.cache_creation_input_tokens + a.usage.cache_read_input_tokens;
        expect(out.usage).to.deep.equal({
          prompt_tokens: prompt,
          completion_tokens: a.usage.output_tokens,
          total_tokens: prompt + a.usage.output_tokens,
          prompt_tokens_details: { cached_tokens: a.usage.cache_read_input_tokens },
        });
      }),
      { numRuns: 300 },
    );
  });

  it('the streamed answer, split anywhere, assembles to the same completion as the whole one', () => {
    fc.assert(
      fc.property(messagesAnswer, fc.array(fc.nat(50), { minLength: 1, maxLength: 20 }), fc.boolean(), (a, cuts, includeUsage) => {
        const body: Json = { model: MODEL.alias, messages: [], stream: true };
        if (includeUsage) body.stream_options = { include_usage: true };
        const t = chatToMessages.answer(call(body));
        const whole = JSON.parse(
          chatToMessages
            .answer(call(body))
            .json(Buffer.from(messageJson(a)))
            .toString(),
        ) as Json;
        const out = streamThrough(t, a, cuts);
        const got = assemble(out);
        const choice = (whole.choices as Json[])[0]!;
        expect(got.message).to.deep.equal(choice.message);
        expect(got.finish).to.equal(choice.finish_reason);
        expect(got.done).to.equal(true);
        expect([...got.ids]).to.deep.equal([a.id]);
        expect(got.usage).to.deep.equal(includeUsage ? whole.usage : undefined);
      }),
      { numRuns: 300 },
    );
  });

  it('a Messages error body keeps its message in the Chat Completions error shape', () => {
    const types = fc.constantFrom(
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'rate_limit_error',
      'api_error',
      'overloaded_error',
      'something_new',
    );
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), types, fc.string(), (status, type, message) => {
        const t = chatToMessages.answer(call({ model: MODEL.alias, messages: [] }));
        const out = JSON.parse(t.error(status, Buffer.from(JSON.stringify({ type: 'error', error: { type, message } }))).toString()) as {
          error: Json;
        };
        expect(Object.keys(out.error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
        expect(out.error.message).to.equal(message === '' ? `The model provider answered with status ${status}.` : message);
        expect(out.error.type).to.be.oneOf(['invalid_request_error', 'permission_error', 'rate_limit_error', 'insufficient_quota', 'server_error']);
      }),
    );
  });
});
