import { isObject, type JsonObject } from '../../../shared/json.js';
import type { ParsedCall } from '../../call.js';
import type { AnswerTranslator, ChatChunkReader } from '../../translate/types.js';
import { functionCallPart, geminiError, geminiJson, geminiJsonOf, parse, reasoningOf, wantsThoughts } from './answer-from-chat.js';
import { Outbox, SseReader } from '../sse.js';
import { googleError } from './errors.js';
import { geminiFinishOf } from './finish.js';
import { usageMetadataOf } from './usage.js';

type Json = Record<string, unknown>;

/** One Gemini stream event, as Google writes them (`alt=sse`, CRLF between events). */
export function geminiFrame(chunk: JsonObject): string {
  return `data: ${JSON.stringify(chunk)}\r\n\r\n`;
}

/** A tool call as its fragments arrive: Gemini sends each function call whole, so it waits for its last fragment. */
interface PendingCall {
  id: unknown;
  name: string;
  args: string;
}

/**
 * A Chat Completions stream → Gemini's `alt=sse` stream: a chunk per text
 * delta as it comes; function calls, whose arguments Chat sends in pieces,
 * in one chunk once the choice finishes; and a last chunk with the finish
 * reason and the usage (Chat sends usage after the finish, in its own
 * chunk, so that last Gemini chunk waits for it or for the end).
 */
class ChatStreamTranslator implements AnswerTranslator {
  private readonly reader = new SseReader((data) => this.onData(data));
  private readonly out = new Outbox();
  private ended = false;
  private finish: unknown;
  private usage: unknown;
  private id: string | undefined;
  private readonly calls = new Map<number, PendingCall>();
  private readonly thoughts: boolean;
  private readonly droppedNames = new Set<string>();

  constructor(private readonly call: ParsedCall) {
    this.thoughts = wantsThoughts(call);
  }

  json(body: Buffer): Buffer {
    return geminiJson(this.call, body, this.droppedNames);
  }

  fromChatJson(completion: unknown): Buffer {
    return geminiJsonOf(this.call, completion, this.droppedNames);
  }

  /** The stream as Chat chunk objects, not bytes (two hops, chain.ts): no middle SSE written and parsed back. */
  fromChatChunks(): ChatChunkReader {
    return {
      chunk: (chunk) => (chunk === '[DONE]' ? this.onDone() : this.onChunk(chunk)),
      end: () => this.finishStream(),
      fail: (message) => this.failStream(message),
      take: () => this.out.take(),
    };
  }

  dropped(): string[] {
    return [...this.droppedNames];
  }

  error(status: number, body: Buffer): Buffer {
    return geminiError(status, body);
  }

  push(chunk: Buffer): Buffer {
    this.reader.feed(chunk);
    return this.out.take();
  }

  end(): Buffer {
    this.finishStream();
    return this.out.take();
  }

  fail(message: string): Buffer {
    this.failStream(message);
    return this.out.take();
  }

  private finishStream(): void {
    if (this.ended) return;
    if (this.finish !== undefined) this.close();
    else this.failWith(502, 'The model provider ended the answer before it finished.');
  }

  private failStream(message: string): void {
    if (!this.ended) this.failWith(502, message);
  }

  private failWith(status: number, message: string): void {
    this.ended = true;
    this.out.push(`data: ${googleError(status, message)}\r\n\r\n`);
  }

  private emit(parts: Json[], extra: Json = {}): void {
    const chunk: JsonObject = { candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: this.call.alias };
    if (this.id !== undefined) chunk.responseId = this.id;
    this.out.push(geminiFrame(chunk));
  }

  private onData(data: string): void {
    if (data === '[DONE]') this.onDone();
    else this.onChunk(parse(data));
  }

  /** Chat's `[DONE]`: the answer closes if its choice had finished (else `end` names the stream cut short). */
  private onDone(): void {
    if (!this.ended && this.finish !== undefined) this.close();
  }

  /** One parsed Chat chunk, from this translator's own SSE reader or from the first of two hops. */
  private onChunk(chunk: unknown): void {
    if (this.ended || !isObject(chunk)) return;
    if (chunk.error !== undefined) {
      const error = isObject(chunk.error) ? chunk.error : {};
      this.failWith(500, typeof error.message === 'string' ? error.message : 'The model provider reported an error mid-answer.');
      return;
    }
    if (typeof chunk.id === 'string' && chunk.id !== '') this.id = chunk.id;
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    this.onDelta(delta);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.finish = choice.finish_reason;
      this.flushCalls();
    }
  }

  private onDelta(delta: Json): void {
    const reasoning = reasoningOf(delta);
    if (reasoning !== undefined) {
      if (this.thoughts) this.emit([{ text: reasoning, thought: true }]);
      else this.droppedNames.add('reasoning_content');
    }
    const text = typeof delta.content === 'string' && delta.content ? delta.content : typeof delta.refusal === 'string' ? delta.refusal : '';
    if (text) this.emit([{ text }]);
    for (const c of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) if (isObject(c)) this.toolCall(c);
  }

  private toolCall(c: Json): void {
    const index = typeof c.index === 'number' ? c.index : 0;
    const fn = isObject(c.function) ? c.function : {};
    const pending = this.calls.get(index) ?? { id: c.id, name: '', args: '' };
    if (typeof fn.name === 'string') pending.name += fn.name;
    if (typeof fn.arguments === 'string') pending.args += fn.arguments;
    this.calls.set(index, pending);
  }

  private flushCalls(): void {
    if (this.calls.size === 0) return;
    const parts = [...this.calls.values()].map((c) => functionCallPart(c.id, c.name, c.args));
    this.calls.clear();
    this.emit(parts);
  }

  /** The provider is done: the finish reason and the usage in Gemini's last chunk. */
  private close(): void {
    this.ended = true;
    const chunk: JsonObject = {
      candidates: [{ content: { role: 'model', parts: [] }, finishReason: geminiFinishOf(this.finish), index: 0 }],
      usageMetadata: usageMetadataOf(this.usage),
      modelVersion: this.call.alias,
    };
    if (this.id !== undefined) chunk.responseId = this.id;
    this.out.push(geminiFrame(chunk));
  }
}

export function createChatAnswerTranslator(call: ParsedCall): AnswerTranslator {
  return new ChatStreamTranslator(call);
}
