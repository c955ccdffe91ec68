import { expect } from 'chai';
import fc from 'fast-check';
import { plainUsage } from '../../../../proxy/call.js';
import { createUsageChunkFilter } from '../../../../proxy/wire/chat/usage-chunk-filter.js';
import { createUsageTap } from '../../../../proxy/wire/usage-tap.js';

const chatFrames = [
  'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}\n\n',
  'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"tok1"}}],"usage":null}\n\n',
  'data: {"id":"c1","choices":[{"index":0,"delta":{"content":" tok2"}}],"usage":null}\n\n',
  'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n',
  'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}\n\n',
  'data: [DONE]\n\n',
];
const chatStream = Buffer.from(chatFrames.join(''));
const withoutUsage = Buffer.from(chatFrames.filter((_, i) => i !== 4).join(''));
/** The same frames as a Python server writes them (`json.dumps`' default separators): `"usage": {`. */
const spacedFrames = chatFrames.map((f) => f.replaceAll('":', '": ').replaceAll('":  ', '": ').replaceAll(',"', ', "'));

const messagesStream = Buffer.from(
  [
    'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":11,"cache_read_input_tokens":4,"output_tokens":1}}}\n\n',
    'event: content_block_start\ndata: {"type":"content_block_start","index":0}\n\n',
    'event: ping\ndata: {"type":"ping"}\n\n',
    'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}\n\n',
    'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":" b"}}\n\n',
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n',
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  ].join(''),
);

/** Cuts a buffer at the given offsets, as TCP may. */
function cut(buf: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((o) => o % (buf.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(buf.subarray(last, p));
    last = p;
  }
  parts.push(buf.subarray(last));
  return parts;
}

describe('proxy: usage taps and the usage-chunk filter', () => {
  it('drops exactly the usage-only chunk and passes every other byte, however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (offsets) => {
        const filter = createUsageChunkFilter();
        const out = Buffer.concat([...cut(chatStream, offsets).map((p) => filter.push(p)), filter.flush()]);
        expect(out.equals(withoutUsage)).to.equal(true);
      }),
    );
  });

  it('drops the usage-only chunk of a stream written with spaced JSON (a Python server), however the stream is cut', () => {
    const spaced = Buffer.from(spacedFrames.join(''));
    expect(spacedFrames[4]).to.include('"usage": {').and.include('"choices": []');
    const expected = Buffer.from(spacedFrames.filter((_, i) => i !== 4).join(''));
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (offsets) => {
        const filter = createUsageChunkFilter();
        const out = Buffer.concat([...cut(spaced, offsets).map((p) => filter.push(p)), filter.flush()]);
        expect(out.toString()).to.equal(expected.toString());
      }),
    );
  });

  it('passes a chunk of whole frames without a usage object as the very buffer it got, and still drops the usage chunk', () => {
    const filter = createUsageChunkFilter();
    const chunks = chatFrames.map((f) => Buffer.from(f));
    const out = chunks.map((c) => filter.push(c));
    chunks.forEach((c, i) => {
      if (i !== 4) expect(out[i]).to.equal(c);
    });
    expect(Buffer.concat([...out, filter.flush()]).equals(withoutUsage)).to.equal(true);
    const crlf = createUsageChunkFilter();
    const frame = Buffer.from('data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\n');
    expect(crlf.push(frame)).to.equal(frame);
  });

  it('reads Chat Completions usage from the final chunk, however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (offsets) => {
        const tap = createUsageTap('chat', true);
        for (const p of cut(chatStream, offsets)) tap.feed(p);
        expect(tap.usage()).to.deep.equal(plainUsage(7, 2));
      }),
    );
  });

  it('reads a Chat stream written with spaced JSON (a Python server) as it reads a compact one: usage, reasons, deltas', () => {
    const spaced = Buffer.from(spacedFrames.join(''));
    expect(spaced.toString()).to.include('"usage": {');
    const tap = createUsageTap('chat', true);
    for (const p of cut(spaced, [17, 200, 333])) tap.feed(p);
    expect(tap.usage()).to.deep.equal(plainUsage(7, 2));
    expect(tap.finishReasons()).to.deep.equal(['stop']);
    expect(tap.outputSeen()).to.equal(4);
  });

  it('reads Messages usage from message_start plus the cumulative message_delta, cache reads apart from input', () => {
    const tap = createUsageTap('messages', true);
    for (const p of cut(messagesStream, [17, 200, 333])) tap.feed(p);
    expect(tap.usage()).to.deep.equal({ ...plainUsage(11, 2), cacheReadTokens: 4 });
  });

  it('counts output seen so far on a stream cut short, with input from message_start', () => {
    const tap = createUsageTap('messages', true);
    tap.feed(messagesStream.subarray(0, messagesStream.indexOf('event: message_delta')));
    expect(tap.usage()).to.equal(undefined);
    expect(tap.reportedSoFar()).to.deep.equal({ ...plainUsage(11, 0), cacheReadTokens: 4 });
    expect(tap.outputSeen()).to.equal(2);
  });

  it('reads usage of whole JSON answers in both formats, and none from a truncated one', () => {
    const chat = createUsageTap('chat', false);
    chat.feed(Buffer.from('{"choices":[],"usage":{"prompt_tokens":3,'));
    chat.feed(Buffer.from('"completion_tokens":4}}'));
    expect(chat.usage()).to.deep.equal(plainUsage(3, 4));
    const messages = createUsageTap('messages', false);
    messages.feed(Buffer.from('{"content":[],"usage":{"input_tokens":5,"output_tokens":6}}'));
    expect(messages.usage()).to.deep.equal(plainUsage(5, 6));
    const cutShort = createUsageTap('chat', false);
    cutShort.feed(Buffer.from('{"usage":{"prompt_tokens":3'));
    expect(cutShort.usage()).to.equal(undefined);
  });

  it('reads the top-level usage of a whole answer as a full parse would, with "usage" keys nested anywhere and any spacing', () => {
    const usage = fc.record({ input_tokens: fc.nat(), output_tokens: fc.nat() });
    // Values that may themselves hold "usage" keys (a tool's input, metadata) or the word in a string.
    const noise = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      usage.map((u) => ({ usage: u })),
      fc.constantFrom('"usage":{"input_tokens":9}', '\\"usage\\":{}', 'usage'),
    );
    fc.assert(
      fc.property(noise, noise, usage, fc.boolean(), fc.constantFrom(0, 2, '\t'), (before, after, top, usageFirst, space) => {
        const entries: [string, unknown][] = [
          ['id', 'msg_1'],
          ['content', [{ type: 'tool_use', input: before }]],
          ['extra', after],
        ];
        if (usageFirst) entries.unshift(['usage', top]);
        else entries.push(['usage', top]);
        const text = JSON.stringify(Object.fromEntries(entries), null, space);
        const tap = createUsageTap('messages', false);
        tap.feed(Buffer.from(text));
        expect(tap.usage()).to.deep.equal(plainUsage(top.input_tokens, top.output_tokens));
      }),
    );
  });

  it('reads no usage from an answer whose only "usage" key is nested, and finish reasons from the whole answer', () => {
    const nested = createUsageTap('messages', false);
    nested.feed(Buffer.from('{"content":[{"type":"tool_use","input":{"usage":{"input_tokens":1,"output_tokens":1}}}],"stop_reason":"tool_use"}'));
    expect(nested.usage()).to.equal(undefined);
    expect(nested.finishReasons()).to.deep.equal(['tool_use']);
    const chat = createUsageTap('chat', false);
    chat.feed(Buffer.from('{"choices":[{"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}  \n'));
    expect(chat.usage()).to.deep.equal(plainUsage(3, 4));
    expect(chat.finishReasons()).to.deep.equal(['length']);
  });
});
