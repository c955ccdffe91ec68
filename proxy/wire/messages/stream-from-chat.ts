import type { ParsedCall } from '../../call.js';
import type { AnswerTranslator, ChatChunkReader } from '../../translate/types.js';
import { isObject } from '../../../shared/json.js';
import { Outbox, SseReader } from '../sse.js';
import {
  messageId,
  messagesError,
  messagesJson,
  messagesJsonOf,
  messagesUsageFromChat,
  noteReasoning,
  parse,
  providerMessage,
  stopReason,
  stopSequencesOf,
  toolUseId,
} from './answer-from-chat.js';

/** A Chat Completions provider's stream → the Messages events its client expects, one provider chunk at a time. */

type Json = Record<string, unknown>;

/** OpenAI's error types met inside a stream → Anthropic's. */
const STREAM_ERROR_TYPES: Record<string, string> = {
  invalid_request_error: 'invalid_request_error',
  rate_limit_error: 'rate_limit_error',
  rate_limit_exceeded: 'rate_limit_error',
  server_error: 'api_error',
  overloaded_error: 'overloaded_error',
};

function frame(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The event sent once per provider chunk, written by hand: only its text needs escaping. */
function deltaFrame(index: number, type: 'text_delta' | 'input_json_delta', field: 'text' | 'partial_json', value: string): string {
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${field}":${JSON.stringify(value)}}}\n\n`;
}

const PING = frame('ping', { type: 'ping' });
const MESSAGE_STOP = frame('message_stop', { type: 'message_stop' });

/**
 * A Chat Completions stream → the Messages event sequence, one provider chunk
 * at a time: message_start on the first chunk, a content block per run of
 * text and per tool call (its argument fragments as input_json_delta), and
 * message_delta + message_stop once the provider is done. Chat streams report
 * usage only in their last chunk, so message_start says 0 input tokens and
 * message_delta carries the real input and output counts (the SDKs take both
 * from there). Billing is unaffected: the proxy reads the provider's own
 * usage chunk, not this translation.
 */
class ChatStreamTranslator implements AnswerTranslator {
  private readonly reader = new SseReader((data) => this.onData(data));
  private readonly stopSequences: string[];
  private readonly out = new Outbox();
  private started = false;
  private ended = false;
  private blocks = 0;
  /** The open content block: its index, and the tool call it holds (-1 for text). */
  private open: { index: number; call: number } | undefined;
  /** Chat tool call index → Messages content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: unknown;
  private matched: unknown;
  private refused = false;
  private usage: unknown;
  private readonly droppedNames = new Set<string>();

  constructor(private readonly call: ParsedCall) {
    this.stopSequences = stopSequencesOf(call);
  }

  json(body: Buffer): Buffer {
    return messagesJson(this.call, body, this.droppedNames);
  }

  fromChatJson(completion: unknown): Buffer {
    return messagesJsonOf(this.call, completion, this.droppedNames);
  }

  /** The stream as Chat chunk objects, not bytes (two hops, chain.ts). */
  fromChatChunks(): ChatChunkReader {
    return {
      chunk: (chunk) => {
        if (this.ended) return;
        if (chunk === '[DONE]') this.close();
        else this.onChunk(chunk);
      },
      end: () => void this.finishStream(),
      fail: (message) => {
        if (!this.ended) this.failWith('api_error', message);
      },
      take: () => this.out.take(),
    };
  }

  dropped(): string[] {
    return [...this.droppedNames];
  }

  error(status: number, body: Buffer): Buffer {
    return messagesError(status, body);
  }

  push(chunk: Buffer): Buffer {
    this.reader.feed(chunk);
    return this.out.take();
  }

  end(): Buffer {
    this.finishStream();
    return this.out.take();
  }

  private finishStream(): void {
    if (this.ended) return;
    if (this.finish !== undefined) this.close();
    else this.failWith('api_error', 'The model provider ended the answer before it finished.');
  }

  fail(message: string): Buffer {
    if (!this.ended) this.failWith('api_error', message);
    return this.out.take();
  }

  private failWith(type: string, message: string): void {
    this.ended = true;
    this.out.push(frame('error', { type: 'error', error: { type, message } }));
  }

  private onData(data: string): void {
    if (this.ended) return;
    if (data === '[DONE]') {
      this.close();
      return;
    }
    this.onChunk(parse(data));
  }

  private onChunk(chunk: unknown): void {
    if (!isObject(chunk)) return;
    if (chunk.error !== undefined) {
      const error = isObject(chunk.error) ? chunk.error : {};
      const type = typeof error.type === 'string' ? STREAM_ERROR_TYPES[error.type] : undefined;
      this.failWith(type ?? 'api_error', providerMessage(chunk) ?? 'The model provider reported an error mid-answer.');
      return;
    }
    if (!this.started) this.start(chunk.id);
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    noteReasoning(delta, this.droppedNames);
    if (typeof delta.content === 'string' && delta.content) this.text(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal) {
      this.refused = true;
      this.text(delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) for (const c of delta.tool_calls) if (isObject(c)) this.toolCall(c);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.finish = choice.finish_reason;
      this.matched = choice.stop_reason;
      this.closeBlock();
    }
  }

  private start(chatId: unknown): void {
    this.started = true;
    const message = {
      id: messageId(chatId),
      type: 'message',
      role: 'assistant',
      model: this.call.alias,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    };
    this.out.push(frame('message_start', { type: 'message_start', message }));
    this.out.push(PING);
  }

  private openBlock(call: number, block: Json): number {
    this.closeBlock();
    const index = this.blocks++;
    this.open = { index, call };
    this.out.push(frame('content_block_start', { type: 'content_block_start', index, content_block: block }));
    return index;
  }

  private closeBlock(): void {
    if (!this.open) return;
    this.out.push(frame('content_block_stop', { type: 'content_block_stop', index: this.open.index }));
    this.open = undefined;
  }

  private text(text: string): void {
    const index = this.open?.call === -1 ? this.open.index : this.openBlock(-1, { type: 'text', text: '' });
    this.out.push(deltaFrame(index, 'text_delta', 'text', text));
  }

  private toolCall(c: Json): void {
    const call = typeof c.index === 'number' ? c.index : 0;
    const fn = isObject(c.function) ? c.function : {};
    let index = this.toolBlocks.get(call);
    if (index === undefined) {
      index = this.openBlock(call, { type: 'tool_use', id: toolUseId(c.id), name: typeof fn.name === 'string' ? fn.name : '', input: {} });
      this.toolBlocks.set(call, index);
    }
    if (typeof fn.arguments === 'string' && fn.arguments) {
      this.out.push(deltaFrame(index, 'input_json_delta', 'partial_json', fn.arguments));
    }
  }

  /** The provider is done: the last block closes, then message_delta (stop reason, usage) and message_stop. */
  private close(): void {
    if (!this.started) this.start(undefined);
    this.closeBlock();
    this.ended = true;
    const stop = this.refused
      ? { stop_reason: 'refusal', stop_sequence: null }
      : stopReason(this.finish, this.matched, this.stopSequences, this.toolBlocks.size > 0);
    this.out.push(frame('message_delta', { type: 'message_delta', delta: stop, usage: messagesUsageFromChat(this.usage) }));
    this.out.push(MESSAGE_STOP);
  }
}

export function createChatAnswerTranslator(call: ParsedCall): AnswerTranslator {
  return new ChatStreamTranslator(call);
}
