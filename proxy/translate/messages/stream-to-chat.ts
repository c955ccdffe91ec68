import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { AnswerTranslator } from '../types.js';
import { isObject } from '../../../shared/json.js';
import { chatError, chatUsage, count, errorFromBody, finishReason, jsonAnswer, noteBlock, readTokens, type Tokens } from './answer-to-chat.js';

/**
 * A Messages provider's event stream → Chat Completions chunks: one event in,
 * at most one chunk out, so nothing waits on anything but the current event.
 */

type Json = Record<string, unknown>;

const DONE = 'data: [DONE]\n\n';

/** One call's stream: Messages events in, chat.completion.chunk frames out. */
class StreamTranslator {
  private readonly parser = createParser({ onEvent: (e) => this.onEvent(e) });
  private readonly decoder = new TextDecoder();
  private out = '';
  /** `data: {"id":…,"model":…,"choices":[{"index":0,"delta":` — fixed once the message's id is known. */
  private head = '';
  private readonly tokens: Tokens = { input: 0, cacheCreation: 0, cacheRead: 0, output: 0 };
  /** Content block index → tool call index, for the blocks that are tool calls. */
  private readonly toolIndex: number[] = [];
  private tools = 0;
  private finished = false;

  constructor(
    private readonly alias: string,
    private readonly created: number,
    private readonly includeUsage: boolean,
    private readonly dropped: Set<string>,
  ) {
    this.setHead('');
  }

  private setHead(id: string): void {
    this.head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.alias)},"choices":[{"index":0,"delta":`;
  }

  private chunk(delta: string, finish = 'null'): void {
    this.out += `${this.head}${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`;
  }

  private fail(error: unknown, status: number, fallback: string): void {
    this.out += `data: ${chatError(error, status, fallback)}\n\n`;
    this.finished = true;
  }

  private onEvent(e: EventSourceMessage): void {
    if (this.finished) return;
    const type = e.event;
    if (type === 'ping') return;
    let data: Json;
    try {
      const parsed = JSON.parse(e.data) as unknown;
      if (!isObject(parsed)) return;
      data = parsed;
    } catch {
      return;
    }
    switch (type ?? data.type) {
      case 'message_start': {
        const m = isObject(data.message) ? data.message : {};
        if (typeof m.id === 'string') this.setHead(m.id);
        readTokens(m.usage, this.tokens);
        this.chunk('{"role":"assistant","content":"","refusal":null}');
        return;
      }
      case 'content_block_start': {
        const block = isObject(data.content_block) ? data.content_block : {};
        noteBlock(block, this.dropped);
        if (block.type === 'tool_use') {
          const index = this.tools++;
          this.toolIndex[count(data.index)] = index;
          this.chunk(
            `{"tool_calls":[{"index":${index},"id":${JSON.stringify(block.id)},"type":"function","function":{"name":${JSON.stringify(block.name)},"arguments":""}}]}`,
          );
        } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          this.chunk(`{"content":${JSON.stringify(block.text)}}`);
        }
        return;
      }
      case 'content_block_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        if (d.type === 'text_delta' && typeof d.text === 'string') this.chunk(`{"content":${JSON.stringify(d.text)}}`);
        else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          const index = this.toolIndex[count(data.index)] ?? 0;
          this.chunk(`{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(d.partial_json)}}}]}`);
        }
        return;
      }
      case 'message_delta': {
        readTokens(data.usage, this.tokens);
        const d = isObject(data.delta) ? data.delta : {};
        if (d.stop_reason !== undefined && d.stop_reason !== null) this.chunk('{}', `"${finishReason(d.stop_reason)}"`);
        return;
      }
      case 'message_stop':
        if (this.includeUsage) {
          const head = this.head.slice(0, this.head.length - '{"index":0,"delta":'.length);
          this.out += `${head}],"usage":${chatUsage(this.tokens)}}\n\n`;
        }
        this.out += DONE;
        this.finished = true;
        return;
      case 'error':
        this.fail(data.error, 500, 'The model provider failed mid-answer.');
        return;
      default:
        // content_block_stop, and event types a newer API may add: nothing to say to a Chat client.
        return;
    }
  }

  push(chunk: Buffer): Buffer {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    const out = this.out;
    if (out === '') return EMPTY;
    this.out = '';
    return Buffer.from(out);
  }

  end(): Buffer {
    // A stream that closes without message_stop was cut short: the client must not take it as complete.
    if (!this.finished) this.fail(undefined, 502, 'The model provider ended the answer early.');
    const out = this.out;
    this.out = '';
    return Buffer.from(out);
  }

  breakOff(message: string): Buffer {
    if (this.finished) return EMPTY;
    this.fail(undefined, 502, message);
    const out = this.out;
    this.out = '';
    return Buffer.from(out);
  }
}

const EMPTY = Buffer.alloc(0);

/** The answer translator for one Chat Completions call served by a Messages provider. */
export function createChatAnswer(alias: string, includeUsage: boolean): AnswerTranslator {
  const created = Math.floor(Date.now() / 1000);
  let stream: StreamTranslator | undefined;
  const dropped = new Set<string>();
  const streamed = () => (stream ??= new StreamTranslator(alias, created, includeUsage, dropped));
  return {
    json: (body) => jsonAnswer(body, alias, created, dropped),
    dropped: () => [...dropped],
    push: (chunk) => streamed().push(chunk),
    end: () => streamed().end(),
    fail: (message) => streamed().breakOff(message),
    error: errorFromBody,
  };
}
