import { createParser } from 'eventsource-parser';
import type { AnswerTranslator } from '../../translate/types.js';
import { googleError } from './errors.js';

/**
 * `:streamGenerateContent` without `?alt=sse`: Google streams one JSON array,
 * each element a chunk, written as it comes (`[{…}`, then `,\r\n{…}` per
 * chunk, `]` at the end). Tollgate makes the SSE form (from the provider,
 * or from a translation) and this rewrites it, event by event.
 */
export class SseToJsonArray {
  private readonly parser = createParser({ onEvent: (e) => this.onEvent(e.data) });
  private readonly decoder = new TextDecoder();
  private out = '';
  private count = 0;
  private closed = false;

  private onEvent(data: string): void {
    if (this.closed || data === '[DONE]') return;
    this.out += (this.count++ === 0 ? '[' : '\n,\r\n') + data;
  }

  /** SSE bytes in, the array's next elements out. */
  push(chunk: Buffer): Buffer {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.take();
  }

  /** The stream ended: the array closes (an empty one if nothing came). */
  end(): Buffer {
    if (!this.closed) {
      this.closed = true;
      this.out += this.count === 0 ? '[]' : '\n]';
    }
    return this.take();
  }

  private take(): Buffer {
    const out = this.out;
    this.out = '';
    return Buffer.from(out);
  }
}

/**
 * The client's answer translator for a stream it asked for without `alt=sse`:
 * the SSE the provider sent (or `inner` made of it) written as one JSON
 * array. A whole answer and an error pass as they are.
 */
export function jsonArrayAnswer(inner: AnswerTranslator | undefined): AnswerTranslator {
  const array = new SseToJsonArray();
  return {
    json: (body) => (inner ? inner.json(body) : body),
    push: (chunk) => array.push(inner ? inner.push(chunk) : chunk),
    end: () => Buffer.concat([array.push(inner ? inner.end() : Buffer.alloc(0)), array.end()]),
    fail: (message) =>
      Buffer.concat([array.push(inner ? inner.fail(message) : Buffer.from(`data: ${googleError(502, message)}\r\n\r\n`)), array.end()]),
    error: (status, body) => (inner ? inner.error(status, body) : body),
    dropped: () => inner?.dropped() ?? [],
  };
}
