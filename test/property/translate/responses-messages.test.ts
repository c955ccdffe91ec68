import { expect } from 'chai';
import fc from 'fast-check';
import { parseCall } from '../../../proxy/wire/index.js';
import { translateCall } from '../../../proxy/translate/index.js';
import { effortOfBudget } from '../../../proxy/translate/reasoning.js';
import { testConfig } from '../../support/control-plane.js';
import { messageJson, messagesAnswer, streamThrough } from '../../support/messages-answers.js';
import { responsesRequest } from '../../support/responses-arbitraries.js';

/**
 * The two-hop chain: a Responses client on a Messages-only provider goes
 * through Chat both ways (translate/chain.ts). Any valid Responses request
 * sent to Messages and read back as a Messages client on a Responses
 * provider loses no field both formats have; and a streamed Messages
 * answer, cut anywhere, assembles into the same Responses answer as the whole one.
 */

type Json = Record<string, unknown>;
const RUNS = 150;
/** A Messages-only model whose entry says it takes a reasoning control, so the effort is mapped, not dropped. */
const MODEL = { ...testConfig().models.models.get('tg/claude-direct')!, reasoning: true };
const ANTHROPIC = { 'anthropic-version': '2023-06-01' };

/** Responses → Messages through Chat, as the proxy sends it to the provider, and what that dropped. */
function toMessages(body: Json): { request: Json; dropped: string[] } {
  const t = translateCall('responses', 'messages', parseCall('responses', Buffer.from(JSON.stringify(body)), {}), MODEL);
  return { request: t.request, dropped: t.dropped };
}

/** Messages → Responses through Chat: the same chain the other way (a Messages client on a Responses provider). */
function toResponses(request: Json): { request: Json; dropped: string[] } {
  const body = { ...request, model: MODEL.alias };
  const t = translateCall('messages', 'responses', parseCall('messages', Buffer.from(JSON.stringify(body)), ANTHROPIC), MODEL);
  return { request: t.request, dropped: t.dropped };
}

/** A system or developer message's text(s): a string, or its text parts one by one. */
function systemTexts(item: Json): string[] {
  return typeof item.content === 'string' ? [item.content] : (item.content as Json[]).map((p) => p.text as string);
}

/**
 * What both formats can say. Messages has one system prompt (a list of
 * texts) where Responses has `instructions` and system or developer
 * messages; it keeps an assistant turn's text as one; its tools are never
 * strict; its JSON output format has no name; it has no `store`; and
 * `tool_choice: "auto"` and `parallel_tool_calls: true` are the defaults either way.
 */
function normal(body: Json): Json {
  const norm = structuredClone(body);
  delete norm.model;
  delete norm.store;
  if (norm.stream === false) delete norm.stream;
  const system: string[] = typeof norm.instructions === 'string' ? [norm.instructions] : [];
  delete norm.instructions;
  const input: Json[] = [];
  for (const item of norm.input as Json[]) {
    if (item.type === 'message' && (item.role === 'system' || item.role === 'developer')) system.push(...systemTexts(item));
    else if (item.type === 'message' && item.role === 'assistant' && Array.isArray(item.content)) {
      const joined = (item.content as Json[]).map((p) => p.text).join('');
      input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: joined, annotations: [] }] });
    } else input.push(item);
  }
  norm.input = input;
  norm.system = system;
  // Messages says "no parallel calls" inside tool_choice, so it names "auto" (the default) to say it.
  if (norm.tool_choice === 'auto') delete norm.tool_choice;
  // With tool_choice "none" no call is made, parallel or not: Messages has nowhere to say it.
  if (norm.parallel_tool_calls === true || norm.tool_choice === 'none') delete norm.parallel_tool_calls;
  if (Array.isArray(norm.tools)) norm.tools = (norm.tools as Json[]).map(({ strict: _strict, ...t }) => t);
  const text = norm.text as { format?: Json } | undefined;
  if (text?.format) text.format = { ...text.format, name: 'any', strict: true };
  return norm;
}

/**
 * A conversation that ends on the assistant's text gets a user turn asking to continue on Messages (a
 * Responses client expects a new turn, not a prefill; new-turn.test.ts), which the trip back would carry:
 * the trip is for conversations that end on the user or a tool.
 */
const endsOnTheUser = responsesRequest.filter((body) => {
  const last = (body.input as Json[]).at(-1)!;
  return !(last.type === 'message' && last.role === 'assistant');
});

describe('property: Responses → Messages (via Chat) → Responses keeps every field both formats have', () => {
  it('any valid request comes back the same; only what Messages cannot hold is dropped, and named', () => {
    fc.assert(
      fc.property(endsOnTheUser, (body) => {
        const there = toMessages(body);
        const back = toResponses(there.request);
        expect(back.dropped).to.deep.equal([]);
        const expected = normal(body);
        // Messages needs max_tokens: without the client's limit the model's ceiling is sent, and comes back.
        expected.max_output_tokens ??= MODEL.max_output_tokens;
        // The reasoning effort reaches Messages only as a thinking budget that fits the output limit.
        if (there.dropped.includes('reasoning_effort')) delete expected.reasoning;
        // Messages thinks in budgets, held to half the output limit ("minimal" is its smallest, as "low"):
        // the effort comes back as the level of the budget it was given.
        const thinking = there.request.thinking as { budget_tokens: number } | undefined;
        if (thinking) expected.reasoning = { effort: effortOfBudget(thinking.budget_tokens) };
        expect(there.dropped.filter((d) => d !== 'reasoning_effort')).to.deep.equal([]);
        const got = normal(back.request);
        expect(got, JSON.stringify({ got, expected })).to.deep.equal(expected);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('property: a reasoning effort crosses both hops where Messages can think', () => {
  it('low, medium and high come back as sent (no sampling settings, no forced tool, no tool results, room for the budget)', () => {
    const request = fc.record({
      effort: fc.constantFrom('low', 'medium', 'high'),
      max_output_tokens: fc.integer({ min: 32_768, max: MODEL.max_output_tokens }),
      input: fc.string({ minLength: 1, maxLength: 12 }),
    });
    fc.assert(
      fc.property(request, ({ effort, ...rest }) => {
        const there = toMessages({ model: MODEL.alias, ...rest, reasoning: { effort } });
        expect(there.dropped).to.deep.equal([]);
        expect(there.request.thinking).to.include({ type: 'enabled' });
        expect(toResponses(there.request).request.reasoning).to.deep.equal({ effort });
      }),
      { numRuns: RUNS },
    );
  });
});

// ---- a streamed Messages answer, read by a Responses client ----

/** The answer translator the proxy builds for a Responses client on the Messages-only provider. */
function answerFor(stream: boolean) {
  const body = { model: MODEL.alias, input: 'x', ...(stream ? { stream: true } : {}) };
  return translateCall('responses', 'messages', parseCall('responses', Buffer.from(JSON.stringify(body)), {}), MODEL).answer;
}

/** Item ids are made fresh per answer; everything else must match. */
function withoutIds(output: Json[]): Json[] {
  return output.map(({ id: _id, ...rest }) => rest);
}

function eventsOf(sse: string): Json[] {
  return sse
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Json);
}

describe('property: a streamed Messages answer, through Chat to Responses events, assembles to the whole answer however it is split', () => {
  it('numbered events; the final response equals the whole answer translated; the deltas add up to its text and arguments', () => {
    fc.assert(
      fc.property(messagesAnswer, fc.array(fc.nat(50), { minLength: 1, maxLength: 20 }), (a, cuts) => {
        const whole = JSON.parse(
          answerFor(false)
            .json(Buffer.from(messageJson(a)))
            .toString(),
        ) as Json;
        const events = eventsOf(streamThrough(answerFor(true), a, cuts));
        expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
        expect(events[0]!.type).to.equal('response.created');
        const final = events.at(-1)!;
        expect(final.type).to.equal(a.stop_reason === 'max_tokens' ? 'response.incomplete' : 'response.completed');
        const response = final.response as Json;
        expect(withoutIds(response.output as Json[])).to.deep.equal(withoutIds(whole.output as Json[]));
        expect(response.usage).to.deep.equal(whole.usage);
        const deltas = (type: string) =>
          events
            .filter((e) => e.type === type)
            .map((e) => e.delta)
            .join('');
        expect(deltas('response.output_text.delta')).to.equal(a.text ?? '');
        const calls = (whole.output as Json[]).filter((i) => i.type === 'function_call');
        expect(deltas('response.function_call_arguments.delta')).to.equal(calls.map((c) => c.arguments).join(''));
      }),
      { numRuns: RUNS },
    );
  });
});
