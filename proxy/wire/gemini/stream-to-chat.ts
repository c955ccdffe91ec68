import { isObject, type JsonObject } from '../../../shared/json.js';
import type { ParsedCall } from '../../call.js';
import type { AnswerTranslator } from '../../translate/types.js';
import { chatCompletionOf, chatErrorFrom, chatStreamError, chatToolCall, notePart } from './answer-to-chat.js';
import { Outbox, SseReader } from '../sse.js';
import { chatFinishOf } from './finish.js';
import { chatUsageOf } from './usage.js';

type Json = Record<string, unknown>;

const DONE = 'data: [DONE]\n\n';

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A Gemini provider's stream (always asked for with `alt=sse`) → Chat
 * Completions chunks: one Gemini chunk in, a chunk per text and per function
 * call out (Gemini sends each call whole, so its arguments are one
 * fragment), the finish reason when a candidate says it, and the usage
 * (every Gemini chunk carries the running total; the last is the answer's)
 * in a last chunk when the client asked for it. Gemini's stream has no end
 * marker: it ends when the provider closes it, after a finish reason.
 */
class GeminiStreamTranslator implements AnswerTranslator {
  private readonly reader = new SseReader((data) => this.onData(data));
  private readonly out = new Outbox();
  private started = false;
  private finished = false;
  private ended = false;
  private calls = 0;
  private usage: unknown;
  private id = '';
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly includeUsage: boolean;
  private readonly droppedNames = new Set<string>();

  constructor(private readonly call: ParsedCall) {
    const options = call.body.stream_options;
    this.includeUsage = isObject(options) && options.include_usage === true;
  }

  json(body: Buffer): Buffer {
    return Buffer.from(JSON.stringify(this.chatJson(body)));
  }

  chatJson(body: Buffer): JsonObject {
    return chatCompletionOf(parse(body.toString('utf8')), this.call.alias, this.created, this.droppedNames);
  }

  dropped(): string[] {
    return [...this.droppedNames];
  }

  error(status: number, body: Buffer): Buffer {
    return chatErrorFrom(status, body);
  }

  push(chunk: Buffer): Buffer {
    this.reader.feed(chunk);
    return this.out.take();
  }

  end(): Buffer {
    if (!this.ended) {
      if (this.finished) this.close();
      else this.failWith(chatStreamError({ code: 502, message: 'The model provider ended the answer early.' }));
    }
    return this.out.take();
  }

  fail(message: string): Buffer {
    if (!this.ended) this.failWith(chatStreamError({ code: 502, message }));
    return this.out.take();
  }

  private failWith(error: JsonObject): void {
    this.ended = true;
    this.out.push(`data: ${JSON.stringify(error)}\n\n`);
  }

  private chunk(delta: Json, finish: string | null = null): void {
    const chunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.call.alias,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    this.out.push(`data: ${JSON.stringify(chunk)}\n\n`);
  }

  private onData(data: string): void {
    if (this.ended) return;
    const chunk = parse(data);
    if (!isObject(chunk)) return;
    if (chunk.error !== undefined) {
      this.failWith(chatStreamError(chunk.error));
      return;
    }
    if (typeof chunk.responseId === 'string') this.id = chunk.responseId;
    if (isObject(chunk.usageMetadata)) this.usage = chunk.usageMetadata;
    if (!this.started) {
      this.started = true;
      this.chunk({ role: 'assistant', content: '', refusal: null });
    }
    const candidate: unknown = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    if (isObject(candidate)) this.onCandidate(candidate);
    else if (isObject(chunk.promptFeedback) && chunk.promptFeedback.blockReason !== undefined) this.finish('content_filter');
  }

  private onCandidate(candidate: Json): void {
    const content = isObject(candidate.content) ? candidate.content : {};
    for (const part of Array.isArray(content.parts) ? content.parts : []) {
      if (!isObject(part)) continue;
      notePart(part, this.droppedNames);
      if (part.thought === true) continue;
      if (typeof part.text === 'string' && part.text !== '') this.chunk({ content: part.text });
      else if (isObject(part.functionCall)) this.chunk({ tool_calls: [chatToolCall(part.functionCall, this.calls++)] });
    }
    if (typeof candidate.finishReason === 'string') this.finish(chatFinishOf(candidate.finishReason, this.calls > 0));
  }

  private finish(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    this.chunk({}, reason);
  }

  /** The provider closed the stream after finishing: the usage chunk if asked for, then `[DONE]`. */
  private close(): void {
    this.ended = true;
    if (this.includeUsage) {
      const chunk = {
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.call.alias,
        choices: [],
        usage: chatUsageOf(this.usage),
      };
      this.out.push(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    this.out.push(DONE);
  }
}

export function createGeminiAnswerTranslator(call: ParsedCall): AnswerTranslator {
  return new GeminiStreamTranslator(call);
}
