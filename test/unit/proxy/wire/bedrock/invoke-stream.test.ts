import { expect } from 'chai';
import { eventStreamToSSEResponse } from '@anthropic-ai/bedrock-sdk/core/streaming';
import { createUsageTap } from '../../../../../proxy/wire/usage-tap.js';
import { createEventStreamWriter, MalformedEventStream } from '../../../../../proxy/wire/bedrock/event-stream.js';
import { createInvokeStreamDecoder, createInvokeStreamEncoder } from '../../../../../proxy/wire/bedrock/invoke-stream.js';
import { chunkMessage, exceptionMessage, invokeAnswer } from '../../../../support/fake-bedrock/answers.js';
import { IdSource } from '../../../../support/fake-upstream/ids.js';

const writer = createEventStreamWriter();
const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'tell me a story about tokens' }] };

/** What the Bedrock fake streams for `body`: Messages events as chunk messages. */
function bedrockStream(usage: Parameters<typeof invokeAnswer>[4] = {}): { events: string[]; bytes: Buffer[] } {
  const answer = invokeAnswer('anthropic.claude-sonnet-4-5-20250929-v1:0', body, true, new IdSource(), usage);
  if (!('events' in answer)) throw new Error('expected a stream');
  return { events: answer.events, bytes: answer.events.map((e) => chunkMessage(writer, e)) };
}

describe('Bedrock InvokeModel streams', () => {
  it('decode into the Messages stream, metered exactly with Bedrock-reported cache reads and writes', () => {
    const { events, bytes } = bedrockStream({ outputTokens: 9, cacheReadTokens: 700, cacheWriteTokens: 300, cacheWrite1hTokens: 100 });
    const decoder = createInvokeStreamDecoder();
    // Cut across message boundaries: a message may span chunks.
    const all = Buffer.concat(bytes);
    const sse = decoder.push(all.subarray(0, 50)) + decoder.push(all.subarray(50, 777)) + decoder.push(all.subarray(777));
    decoder.end();
    expect(sse.split('\n\n').filter(Boolean)).to.have.length(events.length);
    const tap = createUsageTap('messages', true);
    tap.feed(Buffer.from(sse));
    expect(tap.usage()).to.deep.equal({
      inputTokens: 7,
      cacheReadTokens: 700,
      cacheWrite5mTokens: 200,
      cacheWrite1hTokens: 100,
      outputTokens: 9,
      reasoningTokens: 0,
      webSearchRequests: 0,
    });
  });

  it('turn an exception message into the Messages error event of its kind', () => {
    const decoder = createInvokeStreamDecoder();
    const sse = decoder.push(exceptionMessage(writer, 'throttlingException', 'Too many tokens, please wait before trying again.'));
    expect(sse).to.equal(
      'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Too many tokens, please wait before trying again."}}\n\n',
    );
    const other = decoder.push(exceptionMessage(writer, 'modelStreamErrorException', 'The model failed.'));
    expect(other).to.include('"type":"api_error"');
  });

  it('stop at a malformed message, keeping what was metered before it', () => {
    const { bytes } = bedrockStream({ outputTokens: 5 });
    const decoder = createInvokeStreamDecoder();
    const tap = createUsageTap('messages', true);
    tap.feed(Buffer.from(decoder.push(Buffer.concat(bytes.slice(0, 3)))));
    const broken = Buffer.from(bytes[3]!);
    broken[broken.length - 1]! ^= 0xff;
    expect(() => decoder.push(broken)).to.throw(MalformedEventStream);
    expect(tap.usage()).to.equal(undefined);
    expect(tap.reportedSoFar()?.inputTokens).to.equal(7);
  });

  it('refuse a chunk whose payload is not a Messages event', () => {
    const bad = writer.message(
      { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
      Buffer.from('{"bytes":"bm90IGpzb24="}'),
    );
    expect(() => createInvokeStreamDecoder().push(bad)).to.throw(MalformedEventStream, /not JSON/);
  });

  it('encode a Messages stream that the Bedrock SDK reads back event for event', async () => {
    const { events } = bedrockStream({ outputTokens: 4, cacheReadTokens: 10 });
    const sse = events.map((e) => `event: ${(JSON.parse(e) as { type: string }).type}\ndata: ${e}\n\n`).join('');
    const encoder = createInvokeStreamEncoder();
    const bytes = Buffer.concat([encoder.push(sse.slice(0, 100)), encoder.push(sse.slice(100))]);
    const response = eventStreamToSSEResponse(
      new Response(new Uint8Array(bytes), { headers: { 'content-type': 'application/vnd.amazon.eventstream' } }),
    );
    const text = await response.text();
    const read = text
      .split('\n\n')
      .filter(Boolean)
      .map((f) => JSON.parse(/^data: (.*)$/m.exec(f)![1]!) as unknown);
    expect(read).to.deep.equal(events.map((e) => JSON.parse(e) as unknown));
  });

  it('encode a Messages error event as the exception Bedrock sends for it', async () => {
    const encoder = createInvokeStreamEncoder();
    const bytes = encoder.push('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
    const response = eventStreamToSSEResponse(
      new Response(new Uint8Array(bytes), { headers: { 'content-type': 'application/vnd.amazon.eventstream' } }),
    );
    expect(await response.text()).to.equal(
      'event: error\ndata: {"type":"error","error":{"type":"serviceUnavailableException","message":"Overloaded"}}\n\n',
    );
  });
});
