import { expect } from 'chai';
import fc from 'fast-check';
import { parseCall } from '../../../proxy/formats/index.js';
import type { ParsedCall } from '../../../proxy/call.js';
import { chainAnswers } from '../../../proxy/translate/chain.js';
import { translateCall } from '../../../proxy/translate/index.js';
import type { AnswerTranslator } from '../../../proxy/translate/types.js';
import { testConfig } from '../../support/control-plane.js';
import { messageEvents, messagesAnswer } from '../../support/messages-answers.js';

/**
 * Two hops (a Responses client on a Messages-only provider) hand the first
 * hop's Chat chunks to the second as objects rather than SSE bytes
 * (translate/chain.ts). The client must not see a difference: for any
 * Messages stream — well-formed or not, cut anywhere, ended or broken off
 * at any point — the proxy's translator writes the same bytes, push by push,
 * as the same two hops joined by bytes.
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

/** The two hops joined by bytes only: the first hop's SSE is the second hop's input. */
function joinedByBytes(): AnswerTranslator {
  const { first, second } = hops();
  return chainAnswers({ ...first, chatChunks: undefined }, { ...second, fromChatChunks: undefined });
}

/** Ids are made fresh per answer (random); everything else must match. */
function normal(bytes: Buffer): string {
  return bytes.toString().replace(/\b(msg|fc|call|resp)_[0-9a-f]{32}\b/g, '$1_*');
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

describe('property: two hops joined by Chat objects write what they write joined by SSE bytes', () => {
  // One clock for both translators: a second ticking between them is not a difference.
  const now = Date.now;
  before(() => (Date.now = () => 1_764_000_000_000));
  after(() => (Date.now = now));

  it('any Messages stream, cut anywhere, ended or broken off: the same bytes, push by push', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(40), { maxLength: 30 }), ending, (sse, cuts, end) => {
        const objects = translateCall('responses', 'messages', responsesCall(), MODEL).answer;
        const bytes = joinedByBytes();
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
      }),
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
});
