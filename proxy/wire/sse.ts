import { createParser, type EventSourceParser } from 'eventsource-parser';

/**
 * Feeds a provider's SSE bytes to `onData` one event's data at a time,
 * however the bytes were split: a frame cut across chunks waits for its end.
 */
export class SseReader {
  // Made on the first bytes: a JSON answer, or a second hop fed objects (chain.ts), never reads SSE,
  // and a TextDecoder is among the dearest things a translator makes per call.
  private parser: EventSourceParser | undefined;
  private decoder: TextDecoder | undefined;

  constructor(private readonly onData: (data: string, event: string | undefined) => void) {}

  feed(chunk: Buffer): void {
    this.parser ??= createParser({ onEvent: (e) => this.onData(e.data, e.event) });
    this.decoder ??= new TextDecoder();
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }
}

export const EMPTY = Buffer.alloc(0);

/** Frames gathered while handling one chunk, handed out as one buffer. */
export class Outbox {
  private frames: string[] = [];
  push(frame: string): void {
    this.frames.push(frame);
  }
  take(): Buffer {
    if (this.frames.length === 0) return EMPTY;
    const text = this.frames.length === 1 ? this.frames[0]! : this.frames.join('');
    this.frames = [];
    return Buffer.from(text);
  }
}
