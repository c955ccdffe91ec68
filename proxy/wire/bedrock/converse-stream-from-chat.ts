import { createParser, type EventSourceParser } from 'eventsource-parser';
import { isObject, type JsonObject } from '../../../shared/json.js';
import type { AnswerTranslator, ChatChunkReader } from '../../translate/types.js';
import { noteReasoning, parse, providerMessage } from '../messages/answer-from-chat.js';
import { createEventStreamWriter, type EventStreamWriter } from './event-stream.js';
import { converseErrorBody, converseJsonOf, converseStopReason, converseUsageOf } from './converse-from-chat.js';

/**
 * A Chat answer → what a client of the workspace's Converse route reads:
 * a whole answer as Converse's JSON, a stream as ConverseStream's binary
 * event stream. Each event is one message whose `:event-type` header names
 * it and whose body is the event's JSON as it is (unlike InvokeModel's
 * chunks, not base64'd: the AWS SDK's deserializer reads it so):
 * `messageStart`, per block `contentBlockStart` (tool uses only, as Bedrock
 * sends), `contentBlockDelta` (text, or a tool use's input fragment) and
 * `contentBlockStop`, then `messageStop` and `metadata` with the usage. A
 * failure is an exception message, as Bedrock ends a stream it cannot finish.
 */

/** Chat's error types met inside a stream → the exception Bedrock sends for it. */
const EXCEPTION: Record<string, string> = {
  rate_limit_error: 'throttlingException',
  rate_limit_exceeded: 'throttlingException',
  overloaded_error: 'serviceUnavailableException',
  invalid_request_error: 'validationException',
};

const EMPTY = Buffer.alloc(0);

class ConverseAnswerTranslator implements AnswerTranslator {
  private readonly writer: EventStreamWriter = createEventStreamWriter();
  private readonly startedAt = performance.now();
  private parser: EventSourceParser | undefined;
  private decoder: TextDecoder | undefined;
  private out: Buffer[] = [];
  private started = false;
  private stopped = false;
  private ended = false;
  private blocks = 0;
  /** The open content block: its index, and the Chat tool call it holds (-1 for text). */
  private open: { index: number; call: number } | undefined;
  /** Chat tool call index → Converse content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private readonly droppedNames = new Set<string>();

  private latencyMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  json(body: Buffer): Buffer {
    return this.fromChatJson(parse(body.toString('utf8')));
  }

  fromChatJson(completion: unknown): Buffer {
    return Buffer.from(JSON.stringify(converseJsonOf(completion, this.latencyMs(), this.droppedNames)));
  }

  error(status: number, body: Buffer): Buffer {
    return converseErrorBody(status, body);
  }

  dropped(): string[] {
    return [...this.droppedNames];
  }

  push(chunk: Buffer): Buffer {
    this.parser ??= createParser({ onEvent: (e) => this.onData(e.data) });
    this.decoder ??= new TextDecoder();
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.flush();
  }

  end(): Buffer {
    this.finish();
    return this.flush();
  }

  fail(message: string): Buffer {
    this.exception('internalServerException', message);
    return this.flush();
  }

  /** The stream as Chat chunk objects, not bytes (two hops, chain.ts). */
  fromChatChunks(): ChatChunkReader {
    return {
      chunk: (chunk) => this.onChunk(chunk),
      end: () => this.finish(),
      fail: (message) => this.exception('internalServerException', message),
      take: () => this.flush(),
    };
  }

  private flush(): Buffer {
    if (this.out.length === 0) return EMPTY;
    const bytes = this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out);
    this.out = [];
    return bytes;
  }

  private event(type: string, payload: JsonObject): void {
    const headers = { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' };
    this.out.push(this.writer.message(headers, Buffer.from(JSON.stringify(payload))));
  }

  private exception(type: string, message: string): void {
    if (this.ended) return;
    this.ended = true;
    const headers = { ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' };
    this.out.push(this.writer.message(headers, Buffer.from(JSON.stringify({ message }))));
  }

  private onData(data: string): void {
    this.onChunk(data === '[DONE]' ? data : parse(data));
  }

  private onChunk(chunk: unknown): void {
    if (this.ended || !isObject(chunk)) return;
    if (chunk.error !== undefined) {
      const error = isObject(chunk.error) ? chunk.error : {};
      const type = (typeof error.type === 'string' && EXCEPTION[error.type]) || 'internalServerException';
      this.exception(type, providerMessage(chunk) ?? 'The model provider reported an error mid-answer.');
      return;
    }
    this.start();
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (isObject(choice) && !this.stopped) this.onChoice(choice);
    if (isObject(chunk.usage)) {
      this.stop(undefined);
      this.event('metadata', { usage: converseUsageOf(chunk.usage), metrics: { latencyMs: this.latencyMs() } });
      this.ended = true;
    }
  }

  private onChoice(choice: JsonObject): void {
    const delta = isObject(choice.delta) ? choice.delta : {};
    noteReasoning(delta, this.droppedNames);
    const text = typeof delta.content === 'string' ? delta.content : typeof delta.refusal === 'string' ? delta.refusal : '';
    if (text) this.text(text);
    if (Array.isArray(delta.tool_calls)) for (const c of delta.tool_calls) if (isObject(c)) this.toolCall(c);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.stop(choice.finish_reason);
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.event('messageStart', { role: 'assistant' });
  }

  private closeBlock(): void {
    if (!this.open) return;
    this.event('contentBlockStop', { contentBlockIndex: this.open.index });
    this.open = undefined;
  }

  private text(text: string): void {
    if (this.open?.call !== -1) {
      this.closeBlock();
      this.open = { index: this.blocks++, call: -1 };
    }
    this.event('contentBlockDelta', { contentBlockIndex: this.open.index, delta: { text } });
  }

  private toolCall(c: JsonObject): void {
    const call = typeof c.index === 'number' ? c.index : 0;
    const fn = isObject(c.function) ? c.function : {};
    let index = this.toolBlocks.get(call);
    if (index === undefined) {
      this.closeBlock();
      index = this.blocks++;
      this.toolBlocks.set(call, index);
      this.open = { index, call };
      const toolUse = { toolUseId: typeof c.id === 'string' ? c.id : `tooluse_${index}`, name: typeof fn.name === 'string' ? fn.name : '' };
      this.event('contentBlockStart', { contentBlockIndex: index, start: { toolUse } });
    }
    if (typeof fn.arguments === 'string' && fn.arguments)
      this.event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: fn.arguments } } });
  }

  /** The answer is over: the open block closes, then `messageStop` (once; a usage chunk after the finish does not repeat it). */
  private stop(finish: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.closeBlock();
    this.event('messageStop', { stopReason: converseStopReason(finish) });
  }

  /** The provider's stream ended: a stream that never said it finished is a broken one; one without usage still ends on its metadata. */
  private finish(): void {
    if (this.ended) return;
    if (!this.stopped) {
      this.exception('modelStreamErrorException', 'The model provider ended the answer before it finished.');
      return;
    }
    this.ended = true;
    this.event('metadata', { usage: converseUsageOf(undefined), metrics: { latencyMs: this.latencyMs() } });
  }
}

/** The answer translator of a Converse client's call: Chat → Converse; after `first` (provider → Chat) when the provider is not Chat. */
export function createConverseAnswerTranslator(): AnswerTranslator {
  return new ConverseAnswerTranslator();
}
