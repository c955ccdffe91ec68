import { expect } from 'chai';
import fc from 'fast-check';
import { parseCall } from '../../../proxy/wire/index.js';
import type { ParsedCall } from '../../../proxy/call.js';
import { WIRE } from '../../../proxy/wire/registry.js';
import type { JsonObject } from '../../../shared/json.js';
import { chainAnswers } from '../../../proxy/translate/chain.js';
import { translateCall } from '../../../proxy/translate/index.js';
import type { AnswerTranslator } from '../../../proxy/translate/types.js';
import { testConfig } from '../../support/control-plane.js';
import { messageEvents, messageJson, messagesAnswer } from '../../support/messages-answers.js';

/**
 * Two hops (a Responses or Gemini client on a Messages-only provider, and a
 * Messages client on a Responses-only one) hand the first hop's Chat chunks and
 * whole Chat completion to the second as objects rather than bytes
 * (translate/chain.ts). The client must not see a difference: for any
 * provider stream — well-formed or not, cut anywhere, ended or broken off
 * at any point — and any whole answer, the proxy's translator writes the
 * same bytes, push by push, as the same two hops joined by bytes.
 */

type Json = Record<string, unknown>;
const RUNS = 300;
const MODEL = testConfig().models.models.get('tg/claude-direct')!;

function responsesCall(): ParsedCall {
  const body = { model: MODEL.alias, input: 'x', stream: true };
  return parseCall('responses', Buffer.from(JSON.stringify(body)), {});
}

/** The two hops as translateCall builds them: Messages → Chat, then Chat → Responses. */
function hops(): { first: AnswerTranslator; second: AnswerTranslator } {
  const call = responsesCall();
  const toChat = translateCall('responses', 'chat', call, MODEL);
  const middle: ParsedCall = { ...call, body: toChat.request, raw: Buffer.alloc(0), choices: 1 };
  return { first: translateCall('chat', 'messages', middle, MODEL).answer, second: toChat.answer };
}

function messagesCall(): ParsedCall {
  const body = { model: MODEL.alias, max_tokens: 100, messages: [{ role: 'user', content: 'x' }], stream: true };
  return parseCall('messages', Buffer.from(JSON.stringify(body)), { 'anthropic-version': '2023-06-01' });
}

/** The reverse pair as translateCall builds it: Responses → Chat, then Chat → Messages. */
function reverseHops(): { first: AnswerTranslator; second: AnswerTranslator } {
  const call = messagesCall();
  const toChat = translateCall('messages', 'chat', call, MODEL);
  const middle: ParsedCall = { ...call, body: toChat.request, raw: Buffer.alloc(0), choices: 1 };
  return { first: translateCall('chat', 'responses', middle, MODEL).answer, second: toChat.answer };
}

function geminiCall(): ParsedCall {
  const raw = Buffer.from(JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }));
  return WIRE.gemini.modelInPath!.parse(JSON.parse(raw.toString()) as JsonObject, raw, MODEL.alias, true, 'call');
}

/** A Gemini client's pair as translateCall builds it: Messages → Chat, then Chat → Gemini. */
function geminiHops(): { first: AnswerTranslator; second: AnswerTranslator } {
  const call = geminiCall();
  const toChat = translateCall('gemini', 'chat', call, MODEL);
  const middle: ParsedCall = { ...call, body: toChat.request, raw: Buffer.alloc(0), choices: 1 };
  return { first: translateCall('chat', 'messages', middle, MODEL).answer, second: toChat.answer };
}

/** A translator's byte methods alone (called as methods: some translators are class instances). */
function bytesOnly(t: AnswerTranslator): AnswerTranslator {
  return {
    json: (b) => t.json(b),
    push: (b) => t.push(b),
    end: () => t.end(),
    fail: (m) => t.fail(m),
    error: (status, b) => t.error(status, b),
    dropped: () => t.dropped(),
  };
}

/** The two hops joined by bytes only: the first hop's SSE or JSON is the second hop's input. */
function joinedByBytes(pair: { first: AnswerTranslator; second: AnswerTranslator } = hops()): AnswerTranslator {
  return chainAnswers(bytesOnly(pair.first), bytesOnly(pair.second));
}

/** Ids are made fresh per answer (random); everything else must match. */
function normal(bytes: Buffer): string {
  return bytes.toString().replace(/\b(msg|fc|call|resp|toolu)_[0-9a-f]{32}\b/g, '$1_*');
}

const text = fc.string({ unit: 'binary', maxLength: 12 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const index = fc.nat(3);
const usage = fc.record(
  {
    input_tokens: fc.oneof(fc.nat(100000), fc.constant(-1), fc.constant(null)),
    cache_creation_input_tokens: fc.nat(1000),
    cache_read_input_tokens: fc.nat(1000),
    output_tokens: fc.nat(100000),
  },
  { requiredKeys: [] },
);

/** One provider event's type and data, including what a provider should not send. */
type Event = [type: string, data: Json];
const as =
  (type: string) =>
  (data: Json): Event => [type, data];
const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ id: maybe(fc.oneof(text, fc.integer())), usage: maybe(usage) }).map((message) => as('message_start')({ message })),
  fc
    .record({
      index,
      content_block: fc.oneof(
        fc.record({ type: fc.constant('text'), text }),
        fc.record({ type: fc.constant('tool_use'), id: maybe(text), name: maybe(text) }, { requiredKeys: ['type'] }),
        fc.record({ type: fc.constantFrom('thinking', 'server_tool_use', 'web_search_tool_result') }),
      ),
    })
    .map(as('content_block_start')),
  fc
    .record({
      index,
      delta: fc.oneof(
        fc.record({ type: fc.constant('text_delta'), text }),
        fc.record({ type: fc.constant('input_json_delta'), partial_json: text }),
        fc.record({ type: fc.constant('thinking_delta'), thinking: text }),
      ),
    })
    .map(as('content_block_delta')),
  fc.record({ index }).map(as('content_block_stop')),
  fc
    .record({
      delta: fc.record({ stop_reason: fc.constantFrom('end_turn', 'max_tokens', 'tool_use', 'refusal', 'odd', null) }),
      usage: maybe(usage),
    })
    .map(as('message_delta')),
  fc.constant(as('message_stop')({})),
  fc.constant(as('ping')({})),
  fc.record({ error: fc.oneof(fc.record({ type: fc.constantFrom('overloaded_error', 'odd'), message: text }), fc.constant(null)) }).map(as('error')),
  fc.constant(as('odd_new_event')({ x: 1 })),
);

/** SSE text of the events: named by an `event:` line, or only by their data's `type`; now and then data that is not JSON. */
const oddStream = fc.array(fc.tuple(event, fc.boolean(), fc.nat(30)), { maxLength: 20 }).map((events) =>
  events
    .map(([[type, data], named, odd]) => {
      if (odd === 0) return 'data: {not json\n\n';
      const json = JSON.stringify({ type, ...data });
      return named ? `event: ${type}\ndata: ${json}\n\n` : `data: ${json}\n\n`;
    })
    .join(''),
);

/** A whole answer as a provider streams it (text and tool calls), or events in any order. */
const stream = fc.oneof(
  fc.tuple(messagesAnswer, fc.array(fc.nat(50), { maxLength: 20 })).map(([a, cuts]) => messageEvents(a, cuts)),
  oddStream,
);

const ending = fc.constantFrom('end', 'fail', 'end then fail', 'fail then end');

/** A Responses provider's events, including what one should not send. */
const itemId = fc.constantFrom('fc_1', 'fc_2', 'msg_1');
const item = fc.record(
  {
    type: fc.constantFrom('function_call', 'custom_tool_call', 'message', 'reasoning'),
    id: itemId,
    call_id: text,
    name: text,
    arguments: text,
    input: text,
  },
  { requiredKeys: ['type'] },
);
const responsesUsage = fc.record(
  {
    input_tokens: fc.oneof(fc.nat(100000), fc.constant(-1), fc.constant(null)),
    output_tokens: fc.nat(100000),
    input_tokens_details: fc.record({ cached_tokens: fc.nat(1000) }),
  },
  { requiredKeys: [] },
);
const finalResponse = fc.record(
  {
    id: fc.oneof(text, fc.integer()),
    created_at: fc.integer(),
    status: fc.constantFrom('completed', 'incomplete', 'odd'),
    incomplete_details: fc.record({ reason: fc.constantFrom('max_output_tokens', 'content_filter') }),
    usage: responsesUsage,
  },
  { requiredKeys: [] },
);
const responsesEvent: fc.Arbitrary<Json> = fc.oneof(
  finalResponse.map((response) => ({ type: 'response.created', response })),
  fc.record({ type: fc.constantFrom('response.output_text.delta', 'response.refusal.delta'), delta: text }),
  fc.record({ type: fc.constantFrom('response.output_item.added', 'response.output_item.done'), item }),
  fc.record({ type: fc.constant('response.function_call_arguments.delta'), item_id: itemId, delta: text }),
  fc.record({ type: fc.constantFrom('response.completed', 'response.incomplete'), response: finalResponse }),
  fc.record({
    type: fc.constant('response.failed'),
    response: fc.record({ error: fc.record({ message: text, code: fc.constantFrom('rate_limit_exceeded', 'x') }) }),
  }),
  fc.record({ type: fc.constant('error'), message: text }),
  fc.constant({ type: 'response.odd_new_event' }),
);
const oddResponsesStream = fc
  .array(fc.tuple(responsesEvent, fc.nat(30)), { maxLength: 20 })
  .map((events) =>
    events.map(([e, odd]) => (odd === 0 ? 'data: {not json\n\n' : `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`)).join(''),
  );

/** A well-formed Responses stream: a Messages answer streamed through the forward two hops. */
const responsesStream = fc.oneof(
  fc.tuple(messagesAnswer, fc.array(fc.nat(50), { maxLength: 20 })).map(([a, cuts]) => {
    const forward = translateCall('responses', 'messages', responsesCall(), MODEL).answer;
    return Buffer.concat([forward.push(Buffer.from(messageEvents(a, cuts))), forward.end()]).toString();
  }),
  oddResponsesStream,
);

/** Whole answers as a provider might send them with a 200: well-formed, an error object, odd JSON, or not JSON. */
const oddBody = fc.oneof(
  fc.constant('{not json'),
  fc.constant('[1,2]'),
  fc.constant('null'),
  fc.constant('{"error":{"message":"upstream says no"}}'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);
const messagesBody = fc.oneof(messagesAnswer.map(messageJson), oddBody);
const responsesBody = fc.oneof(
  messagesAnswer.map((a) =>
    translateCall('responses', 'messages', responsesCall(), MODEL)
      .answer.json(Buffer.from(messageJson(a)))
      .toString(),
  ),
  oddBody,
);

/** The pushes, then the ending, through both translators: the same bytes at every step. */
function sameStream(objects: AnswerTranslator, bytes: AnswerTranslator, sse: string, cuts: number[], end: string): void {
  const all = Buffer.from(sse);
  let at = 0;
  for (const c of [...cuts, all.length]) {
    const piece = all.subarray(at, at + c + 1);
    at += piece.length;
    expect(normal(objects.push(piece))).to.equal(normal(bytes.push(piece)));
  }
  for (const step of end.split(' then ')) {
    const out = (t: AnswerTranslator) => normal(step === 'end' ? t.end() : t.fail('The connection broke.'));
    expect(out(objects)).to.equal(out(bytes));
  }
  expect(objects.dropped()).to.deep.equal(bytes.dropped());
}

describe('property: two hops joined by Chat objects write what they write joined by SSE bytes', () => {
  // One clock for both translators: a second ticking between them is not a difference.
  const now = Date.now;
  before(() => (Date.now = () => 1_764_000_000_000));
  after(() => (Date.now = now));

  it('any Messages stream, cut anywhere, ended or broken off: the same bytes, push by push', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(40), { maxLength: 30 }), ending, (sse, cuts, end) => {
        sameStream(translateCall('responses', 'messages', responsesCall(), MODEL).answer, joinedByBytes(), sse, cuts, end);
      }),
      { numRuns: RUNS },
    );
  });

  it('any Responses stream to a Messages client, cut anywhere, ended or broken off: the same bytes, push by push', () => {
    fc.assert(
      fc.property(responsesStream, fc.array(fc.nat(40), { maxLength: 30 }), ending, (sse, cuts, end) => {
        sameStream(translateCall('messages', 'responses', messagesCall(), MODEL).answer, joinedByBytes(reverseHops()), sse, cuts, end);
      }),
      { numRuns: RUNS },
    );
  });

  it('any Messages stream to a Gemini client, cut anywhere, ended or broken off: the same bytes, push by push', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(40), { maxLength: 30 }), ending, (sse, cuts, end) => {
        sameStream(translateCall('gemini', 'messages', geminiCall(), MODEL).answer, joinedByBytes(geminiHops()), sse, cuts, end);
      }),
      { numRuns: RUNS },
    );
  });

  it('any whole answer, either way, well-formed or not: the same body and the same dropped names', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          messagesBody.map((b): [string, string] => ['forward', b]),
          responsesBody.map((b): [string, string] => ['reverse', b]),
        ),
        ([way, body]) => {
          const objects =
            way === 'forward'
              ? translateCall('responses', 'messages', responsesCall(), MODEL).answer
              : translateCall('messages', 'responses', messagesCall(), MODEL).answer;
          const bytes = joinedByBytes(way === 'forward' ? hops() : reverseHops());
          expect(normal(objects.json(Buffer.from(body)))).to.equal(normal(bytes.json(Buffer.from(body))));
          expect(objects.dropped()).to.deep.equal(bytes.dropped());
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('Messages → Chat and Chat → Responses join by objects: the first hop never writes Chat bytes', () => {
    const { first, second } = hops();
    let pushed = 0;
    const counted: AnswerTranslator = { ...first, push: (b) => (pushed++, first.push(b)), end: () => (pushed++, first.end()) };
    const chain = chainAnswers(counted, second);
    const out = normal(chain.push(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n')));
    expect(out).to.include('event: response.created');
    chain.end();
    expect(pushed).to.equal(0);
  });

  it('Responses → Chat and Chat → Messages join by objects too, streamed and whole: the first hop never writes Chat bytes', () => {
    const { first, second } = reverseHops();
    let written = 0;
    const counted: AnswerTranslator = {
      ...first,
      push: (b) => (written++, first.push(b)),
      end: () => (written++, first.end()),
      json: (b) => (written++, first.json(b)),
    };
    const stream = chainAnswers(counted, second);
    const out = stream.push(Buffer.from('event: response.created\ndata: {"type":"response.created","response":{"id":"resp_1"}}\n\n'));
    expect(out.toString()).to.include('event: message_start');
    stream.end();
    const whole = chainAnswers(counted, reverseHops().second).json(Buffer.from('{"id":"resp_1","output":[]}'));
    expect(JSON.parse(whole.toString())).to.include({ type: 'message', id: 'msg_1' });
    expect(written).to.equal(0);
  });

  it('Messages → Chat and Chat → Gemini join by objects: the first hop never writes Chat bytes', () => {
    const { first, second } = geminiHops();
    let written = 0;
    const counted: AnswerTranslator = { ...first, push: (b) => (written++, first.push(b)), end: () => (written++, first.end()) };
    const chain = chainAnswers(counted, second);
    chain.push(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n'));
    const out = chain.push(
      Buffer.from(
        `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } })}\n\n`,
      ),
    );
    expect(out.toString()).to.include('"parts":[{"text":"hi"}]');
    chain.end();
    expect(written).to.equal(0);
  });
});
