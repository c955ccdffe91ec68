import { expect } from 'chai';
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { AnswerFrames, type FrameResult } from '../../../../proxy/edge/websocket/answer-frames.js';
import { textFrames } from '../../../../proxy/edge/websocket/text-frames.js';

/** The `ws` library's frame parser (its types do not declare it). */
const { Receiver } = createRequire(import.meta.url)('ws') as {
  Receiver: new (options: { isServer: boolean }) => EventEmitter & { write(chunk: Buffer): boolean };
};

/** What a WebSocket client reads from `bytes`: each text message, decoded by the `ws` library's own receiver. */
function received(bytes: Buffer): string[] {
  const receiver = new Receiver({ isServer: false });
  const messages: string[] = [];
  receiver.on('message', (data: Buffer) => messages.push(data.toString()));
  receiver.write(bytes);
  return messages;
}

describe('proxy: the Responses WebSocket frames an answer', () => {
  it('several text frames in one buffer read back as the same messages, at every length encoding (7-bit, 16-bit, 64-bit)', () => {
    const texts = [
      '',
      'a',
      'é'.repeat(62),
      'x'.repeat(125),
      'x'.repeat(126),
      'ü'.repeat(40_000),
      'x'.repeat(65_535),
      'x'.repeat(65_536),
      'y'.repeat(200_000),
    ];
    expect(received(textFrames(texts.map((t) => Buffer.from(t))))).to.deep.equal(texts);
  });

  it("each server-sent event's data becomes one frame, however the chunks cut the stream; the response id and output items are read", () => {
    const sent: string[] = [];
    let result: FrameResult | undefined;
    const frames = new AnswerFrames(
      (payloads) => (sent.push(...payloads.map(String)), true),
      (r) => (result = r),
    );
    const created = '{"type":"response.created","response":{"id":"resp_1","output":[]}}';
    const item = '{"type":"response.output_item.done","item":{"type":"message","content":[]}}';
    const completed = '{"type":"response.completed","response":{"id":"resp_1"}}';
    const stream = `event: response.created\ndata: ${created}\n\nevent: x\r\ndata: ${item}\r\n\r\ndata: ${completed}\n\ndata: [DONE]\n\n`;
    frames.head(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < stream.length; i += 7) frames.chunk(Buffer.from(stream.slice(i, i + 7)));
    frames.end();
    expect(sent).to.deep.equal([created, item, completed]);
    expect(result).to.deep.equal({ status: 200, responseId: 'resp_1', output: [{ type: 'message', content: [] }], completed: true });
  });

  it('an error answer becomes one error frame with its status, the OpenAI error and the headers a client retries by', () => {
    const sent: string[] = [];
    const frames = new AnswerFrames(
      (payloads) => (sent.push(...payloads.map(String)), true),
      () => {},
    );
    frames.head(429, { 'content-type': 'application/json', 'retry-after': '3', 'set-cookie': 'no' });
    frames.chunk(Buffer.from('{"error":{"type":"rate_limit_error","message":"slow down"}}'));
    frames.end();
    expect(sent.map((t) => JSON.parse(t) as unknown)).to.deep.equal([
      { type: 'error', status: 429, error: { type: 'rate_limit_error', message: 'slow down' }, headers: { 'retry-after': '3' } },
    ]);
  });
});
