import { expect } from 'chai';
import { plainUsage, type Usage } from '../../../../proxy/call.js';
import { chatUsageReader } from '../../../../proxy/wire/chat/usage.js';
import { messagesUsageReader } from '../../../../proxy/wire/messages/usage.js';
import { responsesUsageReader } from '../../../../proxy/wire/responses/usage.js';
import type { UsageReader } from '../../../../proxy/wire/usage-reader.js';
import { callCost } from '../../../../proxy/money/cost.js';
import { buildAnswer } from '../../../support/fake-upstream/answers.js';
import { IdSource } from '../../../support/fake-upstream/ids.js';
import type { OkBehavior } from '../../../support/fake-upstream/types.js';
import { countInputTokens } from '../../../support/fake-upstream/usage.js';
import { testConfig } from '../../../support/control-plane.js';

const SONNET = testConfig().models.models.get('tg/sonnet')!;

/** A whole answer's usage as the tap reads it: the top-level usage object, the bytes, the parsed answer. */
function whole(reader: UsageReader, json: string): Usage | undefined {
  const answer = JSON.parse(json) as Record<string, unknown>;
  return reader.fromAnswer(answer.usage as Record<string, unknown>, Buffer.from(json), () => answer);
}

/** A streamed answer's SSE frames fed to a reader one event at a time. */
function streamed(reader: UsageReader, frames: string[]): Usage | undefined {
  const s = reader.stream();
  for (const frame of frames) {
    const name = /^event: (.+)$/m.exec(frame)?.[1];
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    if (data !== undefined) s.event(data, name);
  }
  return s.usage();
}

function answers(wire: 'responses' | 'messages' | 'chat', body: Record<string, unknown>, ok: OkBehavior) {
  const ids = new IdSource();
  const one = buildAnswer(wire, body, ok.outputTokens ?? 12, ids, ok);
  const two = buildAnswer(wire, { ...body, stream: true, stream_options: { include_usage: true } }, ok.outputTokens ?? 12, ids, ok);
  if (one.stream || !two.stream) throw new Error('expected one whole answer and one stream');
  return { json: one.json, frames: two.frames };
}

describe('proxy: each format’s usage reader, to the neutral split and its exact cost', () => {
  const body = { model: 'tg/sonnet', input: 'What happened in the news today? '.repeat(20), max_output_tokens: 400 };
  const n = countInputTokens(body);

  it('Responses: cached tokens out of input_tokens, reasoning inside output, one search per web_search_call item', () => {
    const { json, frames } = answers('responses', body, { kind: 'ok', outputTokens: 30, cachedTokens: 100, reasoningTokens: 50, webSearches: 2 });
    const expected: Usage = {
      inputTokens: n - 100,
      cacheReadTokens: 100,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 80,
      reasoningTokens: 50,
      webSearchRequests: 2,
    };
    expect(whole(responsesUsageReader, json)).to.deep.equal(expected);
    expect(streamed(responsesUsageReader, frames)).to.deep.equal(expected);
    // $3/$15, reads at the input price (Responses), searches at $0.01: in µ$, exact.
    const micros = (n - 100) * 3 + 100 * 3 + 80 * 15 + 2 * 10_000;
    expect(callCost(SONNET, expected, 'responses').costFemtos).to.equal(BigInt(micros) * 1_000_000_000n);
  });

  it('Responses: an answer without searches is read from its usage alone', () => {
    const { json } = answers('responses', body, { kind: 'ok', outputTokens: 5 });
    expect(whole(responsesUsageReader, json)).to.deep.equal(plainUsage(n, 5));
  });

  it('Messages: a message_delta with updated totals wins over message_start, searches come with it', () => {
    const start =
      '{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}';
    const delta =
      '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":12,"cache_creation_input_tokens":3000,' +
      '"cache_read_input_tokens":500,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000},' +
      '"output_tokens":40,"server_tool_use":{"web_search_requests":4}}}';
    const s = messagesUsageReader.stream();
    s.event(start, 'message_start');
    expect(s.reportedSoFar()).to.deep.equal(plainUsage(10, 0));
    s.event(delta, 'message_delta');
    expect(s.usage()).to.deep.equal({
      inputTokens: 12,
      cacheReadTokens: 500,
      cacheWrite5mTokens: 1000,
      cacheWrite1hTokens: 2000,
      outputTokens: 40,
      reasoningTokens: 0,
      webSearchRequests: 4,
    });
  });

  it('Messages: without the split every write is a 5-minute one, and with only the 1-hour part the rest is 5-minute', () => {
    expect(
      messagesUsageReader.fromAnswer({ input_tokens: 1, cache_creation_input_tokens: 900, output_tokens: 2 }, Buffer.alloc(0), () => undefined),
    ).to.deep.include({
      cacheWrite5mTokens: 900,
      cacheWrite1hTokens: 0,
    });
    expect(
      messagesUsageReader.fromAnswer(
        { input_tokens: 1, cache_creation_input_tokens: 900, cache_creation: { ephemeral_1h_input_tokens: 600 } },
        Buffer.alloc(0),
        () => undefined,
      ),
    ).to.deep.include({ cacheWrite5mTokens: 300, cacheWrite1hTokens: 600 });
  });

  it('Messages from the fake, whole and streamed: the same split both ways', () => {
    const m = { model: 'tg/sonnet', max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }] };
    const { json, frames } = answers('messages', m, {
      kind: 'ok',
      outputTokens: 9,
      cacheReadTokens: 7,
      cacheWrite5mTokens: 5,
      cacheWrite1hTokens: 3,
      webSearches: 1,
    });
    const expected = {
      ...plainUsage(countInputTokens(m), 9),
      cacheReadTokens: 7,
      cacheWrite5mTokens: 5,
      cacheWrite1hTokens: 3,
      webSearchRequests: 1,
    };
    expect(whole(messagesUsageReader, json)).to.deep.equal(expected);
    expect(streamed(messagesUsageReader, frames)).to.deep.equal(expected);
  });

  it('Chat: cached_tokens out of prompt_tokens, reasoning_tokens kept inside completion_tokens', () => {
    const u = {
      prompt_tokens: 10_000,
      completion_tokens: 200,
      prompt_tokens_details: { cached_tokens: 8_000 },
      completion_tokens_details: { reasoning_tokens: 150 },
    };
    expect(chatUsageReader.fromAnswer(u, Buffer.alloc(0), () => undefined)).to.deep.equal({
      inputTokens: 2_000,
      cacheReadTokens: 8_000,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 200,
      reasoningTokens: 150,
      webSearchRequests: 0,
    });
    // More cached than prompted (a provider's bug) never makes input negative.
    expect(chatUsageReader.fromAnswer({ prompt_tokens: 5, prompt_tokens_details: { cached_tokens: 9 } }, Buffer.alloc(0), () => undefined)).to.deep.include(
      {
        inputTokens: 0,
        cacheReadTokens: 5,
      },
    );
  });

  describe('malformed counts read as no usage, so the call bills its hold (security round two, finding 5)', () => {
    const bad: Array<[string, unknown]> = [
      ['negative', -5],
      ['a string', '120'],
      ['null', null],
      ['fractional', 1.5],
    ];
    for (const [what, v] of bad) {
      it(`${what} output count: Chat, Messages and Responses, whole and streamed`, () => {
        const chat = { prompt_tokens: 10, completion_tokens: v };
        expect(chatUsageReader.fromAnswer(chat, Buffer.alloc(0), () => undefined)).to.equal(undefined);
        expect(streamed(chatUsageReader, [`data: ${JSON.stringify({ choices: [], usage: chat })}`])).to.equal(undefined);

        const msg = { input_tokens: 10, output_tokens: v };
        expect(messagesUsageReader.fromAnswer(msg, Buffer.alloc(0), () => undefined)).to.equal(undefined);
        const start = `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } })}`;
        const delta = `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: v } })}`;
        expect(streamed(messagesUsageReader, [start, delta])).to.equal(undefined);

        const resp = { object: 'response', output: [], usage: { input_tokens: v, output_tokens: 3 } };
        expect(whole(responsesUsageReader, JSON.stringify(resp))).to.equal(undefined);
        const done = `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: resp })}`;
        expect(streamed(responsesUsageReader, [done])).to.equal(undefined);
      });
    }

    it('well-formed counts next to the same shapes still read (the check does not spoil good reports)', () => {
      expect(chatUsageReader.fromAnswer({ prompt_tokens: 10, completion_tokens: 0 }, Buffer.alloc(0), () => undefined)).to.deep.include({
        outputTokens: 0,
      });
      expect(messagesUsageReader.fromAnswer({ input_tokens: 10, output_tokens: 4 }, Buffer.alloc(0), () => undefined)).to.deep.include({ outputTokens: 4 });
    });
  });
});
