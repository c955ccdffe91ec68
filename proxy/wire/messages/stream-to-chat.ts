import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { AnswerTranslator, ChatChunkStream } from '../../translate/types.js';
import { isObject } from '../../../shared/json.js';
import { parseJson } from '../responses/json.js';
import {
  chatCompletion,
  chatError,
  chatUsageText,
  count,
  errorFromBody,
  finishReason,
  jsonAnswer,
  noteBlock,
  readTokens,
  type Tokens,
} from './answer-to-chat.js';

/**
 * A Messages provider's event stream → Chat Completions chunks: one event in,
 * at most one chunk out, so nothing waits on anything but the current event.
 */

type Json = Record<string, unknown>;

const DONE = 'data: [DONE]\n\n';

/**
 * One call's stream: Messages events in, chat.completion.chunk frames out —
 * as SSE text, or, given a `sink`, as the objects a second hop would parse
 * from that text (chain.ts): the per-token chunks built as objects, the few
 * others parsed from the very text a Chat client would get, so both ways
 * carry the same chunks.
 */
class StreamTranslator {
  private readonly parser = createParser({ onEvent: (e) => this.onEvent(e) });
  private readonly decoder = new TextDecoder();
  private out = '';
  /** `data: {"id":…,"model":…,"choices":[{"index":0,"delta":` — fixed once the message's id is known. */
  private head = '';
  private id = '';
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
    private readonly sink?: (chunk: unknown) => void,
  ) {
    this.setHead('');
  }

  private setHead(id: string): void {
    this.id = id;
    this.head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.alias)},"choices":[{"index":0,"delta":`;
  }

  private chunk(delta: string, finish = 'null'): void {
    this.write(`${this.head}${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`);
  }

  /** A whole `data: …\n\n` frame: appended for a Chat client, its data parsed for a sink. */
  private write(frame: string): void {
    if (this.sink === undefined) this.out += frame;
    else {
      const data = frame.slice('data: '.length, -2);
      this.sink(data === '[DONE]' ? '[DONE]' : parseJson(data));
    }
  }

  // The chunks met once per token go to a sink as objects: no text to write and parse again.

  private content(text: string): void {
    if (this.sink === undefined) this.chunk(`{"content":${JSON.stringify(text)}}`);
    else this.sink(this.object({ content: text }));
  }

  private args(index: number, args: string): void {
    if (this.sink === undefined) this.chunk(`{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(args)}}}]}`);
    else this.sink(this.object({ tool_calls: [{ index, function: { arguments: args } }] }));
  }

  /** The chunk `chunk(delta)` writes, as JSON.parse reads it back. */
  private object(delta: Json): Json {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.alias,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    };
  }

  private fail(error: unknown, status: number, fallback: string): void {
    this.write(`data: ${chatError(error, status, fallback)}\n\n`);
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
          this.content(block.text);
        }
        return;
      }
      case 'content_block_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        if (d.type === 'text_delta' && typeof d.text === 'string') this.content(d.text);
        else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string')
          this.args(this.toolIndex[count(data.index)] ?? 0, d.partial_json);
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
          this.write(`${head}],"usage":${chatUsageText(this.tokens)}}\n\n`);
        }
        this.write(DONE);
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
    chatJson: (body) => chatCompletion(body, alias, created, dropped),
    dropped: () => [...dropped],
    push: (chunk) => streamed().push(chunk),
    end: () => streamed().end(),
    fail: (message) => streamed().breakOff(message),
    error: errorFromBody,
    chatChunks: (sink): ChatChunkStream => {
      const chunks = (stream = new StreamTranslator(alias, created, includeUsage, dropped, sink));
      return { push: (chunk) => void chunks.push(chunk), end: () => void chunks.end() };
    },
  };
}
