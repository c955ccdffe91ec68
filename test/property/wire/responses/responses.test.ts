import { expect } from 'chai';
import fc from 'fast-check';
import { parseResponsesRequest } from '../../../../proxy/wire/responses/schema.js';
import { answerFromChat } from '../../../../proxy/wire/responses/answer-from-chat.js';
import { answerToChat } from '../../../../proxy/wire/responses/answer-to-chat.js';
import { responsesCall } from '../../../../proxy/wire/responses/context.js';
import { requestFromChat } from '../../../../proxy/wire/responses/request-from-chat.js';
import { requestToChat } from '../../../../proxy/wire/responses/request-to-chat.js';
import { responsesAnswerFromChat } from '../../../../proxy/wire/responses/stream-from-chat.js';
import { chatAnswerFromResponses } from '../../../../proxy/wire/responses/stream-to-chat.js';
import type { AnswerTranslator } from '../../../../proxy/translate/types.js';
import { args, responsesRequest, schema, text } from '../../../support/responses-arbitraries.js';

/**
 * A Responses client on a Chat Completions provider (and a Chat client on a
 * Responses provider): any valid Responses request survives the trip to Chat
 * and back with every field both formats have; any Chat answer comes back
 * from the Responses answer made of it, namespaced tool calls included; and
 * a streamed answer, cut anywhere, assembles to the same answer as the whole
 * one, in both directions.
 */

type Json = Record<string, unknown>;
const RUNS = 150;
const ABLE = { reasoning: true, webSearch: true };

/**
 * What both formats can say: instructions are a leading system message;
 * an assistant's text parts are one text; a tool that does not say is not
 * strict; `store: false` and `stream: false` say nothing.
 */
function normal(body: Json): Json {
  const norm = structuredClone(body);
  delete norm.model;
  const input = (norm.input as Json[]).map((item) => {
    if (item.type === 'message' && item.role === 'assistant' && Array.isArray(item.content)) {
      return {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: (item.content as Json[]).map((p) => p.text).join(''), annotations: [] }],
      };
    }
    return item;
  });
  if (typeof norm.instructions === 'string') input.unshift({ type: 'message', role: 'system', content: norm.instructions });
  delete norm.instructions;
  norm.input = input;
  // Chat's default is not strict; a Responses tool that does not say is sent as Chat's default.
  if (Array.isArray(norm.tools)) norm.tools = (norm.tools as Json[]).map((t) => ({ strict: false, ...t }));
  if (norm.store === false) delete norm.store;
  if (norm.stream === false) delete norm.stream;
  return norm;
}

describe('property: Responses → Chat → Responses keeps every field both formats have', () => {
  it('any valid request comes back the same, nothing dropped', () => {
    fc.assert(
      fc.property(responsesRequest, (body) => {
        const there = requestToChat(parseResponsesRequest(body), 'up', ABLE);
        expect(there.dropped).to.deep.equal([]);
        const back = requestFromChat(there.request, 'tg/gpt-direct', ABLE);
        expect(back.dropped).to.deep.equal([]);
        expect(normal(back.request)).to.deep.equal(normal(body));
      }),
      { numRuns: RUNS },
    );
  });
});

// ---- random Chat answers ----

/** Tools a Codex-like request declares: plain, namespaced (flattened on Chat) and free-form. */
const declared = [
  { type: 'function', name: 'shell', parameters: schema },
  { type: 'namespace', name: 'github', tools: [{ type: 'function', name: 'search', parameters: schema }] },
  { type: 'custom', name: 'apply_patch' },
];
const call = responsesCall('tg/gpt-direct', parseResponsesRequest({ model: 'tg/gpt-direct', input: 'x', tools: declared }));

const chatToolCall = fc.record({
  id: fc.stringMatching(/^call_[a-z0-9]{6}$/),
  name: fc.constantFrom('shell', 'github__search', 'apply_patch'),
  args,
});

const completion = fc
  .record({
    content: fc.option(fc.string({ minLength: 1, maxLength: 30 }), { nil: undefined }),
    calls: fc.uniqueArray(chatToolCall, { maxLength: 3, selector: (c) => c.id }),
    cut: fc.boolean(),
    prompt: fc.nat(5000),
    cached: fc.nat(5000),
    completion: fc.nat(5000),
    reasoning: fc.nat(5000),
  })
  .filter((r) => r.content !== undefined || r.calls.length > 0)
  .map((r): Json => {
    const message: Json = { role: 'assistant', content: r.content ?? null, refusal: null };
    if (r.calls.length) {
      // A free-form tool's arguments are always its one `input` string.
      message.tool_calls = r.calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.name === 'apply_patch' ? JSON.stringify({ input: c.args }) : c.args },
      }));
    }
    const finish = r.cut ? 'length' : r.calls.length ? 'tool_calls' : 'stop';
    return {
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: 1700000000,
      model: 'tg/gpt-direct',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage: {
        prompt_tokens: r.prompt + r.cached,
        completion_tokens: r.completion + r.reasoning,
        total_tokens: r.prompt + r.cached + r.completion + r.reasoning,
        prompt_tokens_details: { cached_tokens: r.cached },
        completion_tokens_details: { reasoning_tokens: r.reasoning },
      },
    };
  });

describe('property: a Chat answer survives the trip through a Responses answer', () => {
  it('content, calls (namespaced and free-form ones mapped back to their flat names), finish reason and usage', () => {
    fc.assert(
      fc.property(completion, (c) => {
        const responses = answerFromChat(call, c);
        for (const item of responses.output as Json[]) {
          if (item.type === 'function_call' && item.name === 'search') expect(item.namespace).to.equal('github');
        }
        const back = answerToChat('tg/gpt-direct', responses);
        // The client saw the names it declared; the names the provider used come back through the map.
        const choice = (back.choices as Json[])[0]! as Json;
        const message = choice.message as Json;
        for (const tc of (message.tool_calls as Json[] | undefined) ?? []) {
          const fn = tc.function as Json;
          const item = (responses.output as Json[]).find((i) => i.call_id === tc.id)!;
          fn.name = call.names.flat(fn.name as string, item.namespace as string | undefined);
        }
        expect(back).to.deep.equal(c);
      }),
      { numRuns: RUNS },
    );
  });
});

// ---- streams split anywhere ----

/** The Chat stream OpenAI would send for a completion: role chunk, content, calls in fragments, finish, usage, [DONE]. */
function chatFrames(c: Json): string {
  const choice = (c.choices as Json[])[0]!;
  const message = choice.message as Json;
  const head = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
  const chunk = (delta: Json, finish: unknown = null) => ({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] });
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })];
  if (typeof message.content === 'string')
    for (let i = 0; i < message.content.length; i += 5) chunks.push(chunk({ content: message.content.slice(i, i + 5) }));
  ((message.tool_calls as Json[] | undefined) ?? []).forEach((tc, index) => {
    const fn = tc.function as Json;
    chunks.push(chunk({ tool_calls: [{ index, id: tc.id, type: 'function', function: { name: fn.name, arguments: '' } }] }));
    const a = fn.arguments as string;
    for (let i = 0; i < a.length; i += 4) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: a.slice(i, i + 4) } }] }));
  });
  chunks.push(chunk({}, choice.finish_reason));
  chunks.push({ ...head, choices: [], usage: c.usage });
  chunks.push('[DONE]');
  return chunks.map((x) => `data: ${typeof x === 'string' ? x : JSON.stringify(x)}\n\n`).join('');
}

/** Feeds `text` to a translator in pieces cut at `cuts` (byte offsets), then ends it. */
function feed(t: AnswerTranslator, text: string, cuts: number[]): string {
  const bytes = Buffer.from(text);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    out.push(t.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(t.end());
  return Buffer.concat(out).toString();
}

function dataOf(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .filter(Boolean)
    .map((f) => f.slice(f.indexOf('data: ') + 6))
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}

/** Item ids are made fresh per answer; everything else must match. */
function withoutIds(output: Json[]): Json[] {
  return output.map(({ id: _id, ...rest }) => rest);
}

/** A Chat client's view of a stream: the completion its chunks assemble to. */
function assemble(chunks: unknown[]): Json {
  let content: string | null = null;
  const calls: Json[] = [];
  let finish: unknown;
  let usage: unknown;
  let id: unknown;
  let created: unknown;
  for (const chunk of chunks) {
    if (chunk === '[DONE]' || typeof chunk !== 'object' || chunk === null) continue;
    const c = chunk as Json;
    id = c.id;
    created = c.created;
    if (c.usage) usage = c.usage;
    const choice = (c.choices as Json[])[0];
    if (!choice) continue;
    const delta = choice.delta as Json;
    if (typeof delta.content === 'string' && delta.content) content = (content ?? '') + delta.content;
    for (const tc of (delta.tool_calls as Json[] | undefined) ?? []) {
      const i = tc.index as number;
      const fn = tc.function as Json;
      if (!calls[i]) calls[i] = { id: tc.id, type: 'function', function: { name: fn.name, arguments: '' } };
      const target = calls[i]!.function as Json;
      target.arguments = `${target.arguments as string}${(fn.arguments as string | undefined) ?? ''}`;
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  const message: Json = { role: 'assistant', content, refusal: null };
  if (calls.length) message.tool_calls = calls;
  return {
    id,
    object: 'chat.completion',
    created,
    model: 'tg/gpt-direct',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage,
  };
}

describe('property: a streamed answer assembles to the whole one however the stream is split', () => {
  const cuts = fc.array(fc.nat(), { maxLength: 12 });

  it('Chat stream → Responses events: the final response is the translated whole answer, and the deltas add up to it', () => {
    fc.assert(
      fc.property(completion, cuts, (c, at) => {
        const events = dataOf(feed(responsesAnswerFromChat(call), chatFrames(c), at)) as Json[];
        expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
        const final = events.at(-1)!;
        expect(final.type).to.equal((c.choices as Json[])[0]!.finish_reason === 'length' ? 'response.incomplete' : 'response.completed');
        const whole = answerFromChat(call, c);
        const response = final.response as Json;
        expect(withoutIds(response.output as Json[])).to.deep.equal(withoutIds(whole.output as Json[]));
        expect(response.usage).to.deep.equal(whole.usage);
        const text = events
          .filter((e) => e.type === 'response.output_text.delta')
          .map((e) => e.delta)
          .join('');
        const message = (c.choices as Json[])[0]!.message as Json;
        expect(text).to.equal(message.content ?? '');
      }),
      { numRuns: RUNS },
    );
  });

  it('Responses events → Chat chunks: the chunks assemble to the completion the whole answer translates to', () => {
    fc.assert(
      fc.property(completion, cuts, cuts, (c, at1, at2) => {
        // A Responses stream made from a Chat one, then read back by a Chat client on a Responses provider.
        const plain = responsesCall('tg/gpt-direct', parseResponsesRequest({ model: 'tg/gpt-direct', input: 'x' }));
        const responsesSse = feed(responsesAnswerFromChat(plain), chatFrames(c), at1);
        const chunks = dataOf(feed(chatAnswerFromResponses('tg/gpt-direct', true), responsesSse, at2));
        expect(chunks.at(-1)).to.equal('[DONE]');
        expect(assemble(chunks)).to.deep.equal({ ...c, id: 'chatcmpl-abc123' });
      }),
      { numRuns: RUNS },
    );
  });
});

describe('property: any body gets a translation or a 400, never another error', () => {
  const anyValue = fc.jsonValue({ maxDepth: 3 });
  const looseItem = fc.oneof(
    anyValue,
    fc.record(
      {
        type: fc.constantFrom('message', 'function_call', 'function_call_output', 'custom_tool_call', 'reasoning', 'x'),
        role: anyValue,
        content: anyValue,
        call_id: anyValue,
        name: anyValue,
        arguments: anyValue,
        output: anyValue,
        input: anyValue,
        namespace: anyValue,
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({
      role: fc.constantFrom('user', 'assistant', 'system', 'developer'),
      content: fc.oneof(
        text,
        fc.array(
          fc.record(
            {
              type: fc.constantFrom('input_text', 'output_text', 'input_image', 'refusal', 'input_file'),
              text: anyValue,
              image_url: anyValue,
              refusal: anyValue,
            },
            { requiredKeys: ['type'] },
          ),
        ),
      ),
    }),
  );
  const looseTool = fc.oneof(
    anyValue,
    fc.record(
      {
        type: fc.constantFrom('function', 'custom', 'namespace', 'web_search', 'tool_search', 'mcp'),
        name: anyValue,
        parameters: anyValue,
        tools: anyValue,
        format: anyValue,
      },
      { requiredKeys: ['type'] },
    ),
  );
  const body = fc.record(
    {
      model: fc.oneof(fc.constant('m'), anyValue),
      input: fc.oneof(text, fc.array(looseItem, { maxLength: 4 }), anyValue),
      tools: fc.oneof(fc.array(looseTool, { maxLength: 3 }), anyValue),
      tool_choice: anyValue,
      reasoning: anyValue,
      text: anyValue,
      instructions: anyValue,
      previous_response_id: anyValue,
      max_output_tokens: anyValue,
    },
    { requiredKeys: [] },
  );

  it('parse then translate both ways throws nothing but a 400', () => {
    fc.assert(
      fc.property(body, (b) => {
        try {
          const { request } = requestToChat(parseResponsesRequest(b), 'up', ABLE);
          requestFromChat(request, 'm', ABLE);
        } catch (err) {
          expect((err as { status?: unknown }).status, String(err)).to.equal(400);
        }
      }),
      { numRuns: 500 },
    );
  });
});
