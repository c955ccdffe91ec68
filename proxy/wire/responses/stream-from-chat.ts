import { isObject } from '../../../shared/json.js';
import type { Json } from './json.js';
import { parseJson } from './json.js';
import { providerError, toOpenAIErrorBody } from './errors.js';
import type { AnswerTranslator, ChatChunkReader } from '../../translate/types.js';
import { answerFromChat, callItem, messageItem, responseIdFrom, responseObject, responsesUsageFromChat, statusOf } from './answer-from-chat.js';
import { newId, type ResponsesCall } from './context.js';
import { originOf } from './tool-names.js';
import { Outbox, SseReader } from '../sse.js';
import { compactionItem } from './compaction.js';

/**
 * A Chat Completions stream → the Responses event sequence, chunk by chunk:
 * `response.created` and `response.in_progress` on the first chunk; a
 * `message` item (one `output_text` part, or a `refusal` part) per run of
 * text; a `function_call` item per tool call with its argument fragments as
 * `response.function_call_arguments.delta`; each item closed (`.done`
 * events) when the next opens or the provider finishes; then
 * `response.completed` (or `response.incomplete` when cut by the token
 * limit) carrying the whole answer and its usage, which a Chat stream gives
 * only in its last chunk. A free-form tool's input is sent whole when its
 * call closes: it arrives JSON-escaped inside the arguments and cannot be
 * unescaped piece by piece. Every event has its `sequence_number`. A
 * compaction (compaction.ts) streams no text: its one `compaction` item is
 * added and done at the end, holding the whole summary.
 */

interface MessageState {
  kind: 'message';
  index: number;
  id: string;
  text: string;
  refusal: string;
  /** The part open now: 0 is the text part, 1 the refusal part (only when there is text before it). */
  part: 'text' | 'refusal' | undefined;
}

interface CallState {
  kind: 'call';
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
  custom: boolean;
}

/** A compaction's one item, added whole once the summary is in. */
interface CompactionState {
  kind: 'compaction';
  index: number;
  item: Json;
}

type ItemState = MessageState | CallState | CompactionState;

export class ChatToResponsesEvents implements ChatChunkReader {
  private readonly out = new Outbox();
  private sequence = 0;
  private started = false;
  private ended = false;
  private responseId = '';
  private createdAt = Math.floor(Date.now() / 1000);
  private readonly items: ItemState[] = [];
  private open: ItemState | undefined;
  /** Chat tool call index → its item. */
  private readonly calls = new Map<number, CallState>();
  private finish: unknown;
  private usage: unknown;
  /** A compaction's summary so far: sent as one item at the end, never as text. */
  private summary = '';

  constructor(private readonly call: ResponsesCall) {}

  /** One parsed Chat chunk; `'[DONE]'` when the provider says it is done. */
  chunk(chunk: unknown): void {
    if (this.ended) return;
    if (chunk === '[DONE]') return this.complete();
    if (!isObject(chunk)) return;
    if (chunk.error !== undefined) return this.failWith(providerError(chunk)?.message ?? 'The model provider reported an error mid-answer.');
    if (!this.started) this.start(chunk.id, chunk.created);
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (this.call.compaction) {
      if (typeof delta.content === 'string') this.summary += delta.content;
    } else {
      if (typeof delta.content === 'string' && delta.content) this.text('text', delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal) this.text('refusal', delta.refusal);
      if (Array.isArray(delta.tool_calls)) for (const c of delta.tool_calls) if (isObject(c)) this.toolCall(c);
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.finish = choice.finish_reason;
      this.closeItem();
    }
  }

  /** The provider's stream ended: complete if it finished, else fail. */
  end(): void {
    if (this.ended) return;
    if (this.finish !== undefined) this.complete();
    else this.failWith('The model provider ended the answer before it finished.');
  }

  fail(message: string): void {
    if (!this.ended) this.failWith(message);
  }

  take(): Buffer {
    return this.out.take();
  }

  /** Events other than the per-token deltas (those are written by hand in `text` and `toolCall`: only their delta needs escaping). */
  private emit(type: string, fields: Json): void {
    this.out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`);
  }

  private response(status: string, extra: Json = {}): Json {
    return responseObject(
      this.call,
      this.responseId,
      this.createdAt,
      status,
      this.items.map((i) => this.itemJson(i, 'completed')),
      extra,
    );
  }

  private start(chatId: unknown, created?: unknown): void {
    this.started = true;
    this.responseId = responseIdFrom(chatId);
    if (typeof created === 'number') this.createdAt = created;
    const response = this.response('in_progress');
    this.emit('response.created', { response });
    this.emit('response.in_progress', { response });
  }

  private itemJson(item: ItemState, status: string): Json {
    if (item.kind === 'compaction') return item.item;
    if (item.kind === 'message') return messageItem(item.id, item.text, item.refusal, status);
    return callItem(this.call, item.id, item.callId, item.name, item.args, status);
  }

  private addItem(item: ItemState): void {
    this.closeItem();
    this.items.push(item);
    this.open = item;
    const json = this.itemJson(item, 'in_progress');
    if (item.kind === 'message') json.content = [];
    this.emit('response.output_item.added', { output_index: item.index, item: json });
  }

  private partJson(m: MessageState, part: 'text' | 'refusal', done: boolean): Json {
    if (part === 'refusal') return { type: 'refusal', refusal: done ? m.refusal : '' };
    return { type: 'output_text', text: done ? m.text : '', annotations: [], logprobs: [] };
  }

  private contentIndex(m: MessageState, part: 'text' | 'refusal'): number {
    return part === 'refusal' && m.text !== '' ? 1 : 0;
  }

  private text(part: 'text' | 'refusal', delta: string): void {
    let m = this.open?.kind === 'message' ? this.open : undefined;
    if (!m) {
      m = { kind: 'message', index: this.items.length, id: newId('msg_'), text: '', refusal: '', part: undefined };
      this.addItem(m);
    }
    if (m.part !== part) {
      this.closePart(m);
      m.part = part;
      this.emit('response.content_part.added', {
        item_id: m.id,
        output_index: m.index,
        content_index: this.contentIndex(m, part),
        part: this.partJson(m, part, false),
      });
    }
    if (part === 'text') {
      m.text += delta;
      this.out.push(
        `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${this.sequence++},` +
          `"item_id":"${m.id}","output_index":${m.index},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]}\n\n`,
      );
    } else {
      m.refusal += delta;
      this.emit('response.refusal.delta', { item_id: m.id, output_index: m.index, content_index: this.contentIndex(m, part), delta });
    }
  }

  private closePart(m: MessageState): void {
    const part = m.part;
    if (part === undefined) return;
    const at = { item_id: m.id, output_index: m.index, content_index: this.contentIndex(m, part) };
    if (part === 'text') this.emit('response.output_text.done', { ...at, text: m.text, logprobs: [] });
    else this.emit('response.refusal.done', { ...at, refusal: m.refusal });
    this.emit('response.content_part.done', { ...at, part: this.partJson(m, part, true) });
    m.part = undefined;
  }

  private toolCall(c: Json): void {
    const index = typeof c.index === 'number' ? c.index : 0;
    const fn = isObject(c.function) ? c.function : {};
    let state = this.calls.get(index);
    if (!state) {
      const name = typeof fn.name === 'string' ? fn.name : '';
      state = {
        kind: 'call',
        index: this.items.length,
        id: newId('fc_'),
        callId: typeof c.id === 'string' && c.id ? c.id : newId('call_'),
        name,
        args: '',
        custom: originOf(this.call.names, name).custom,
      };
      this.calls.set(index, state);
      this.addItem(state);
    }
    if (typeof fn.arguments !== 'string' || fn.arguments === '') return;
    state.args += fn.arguments;
    // A delta after the call closed (a provider interleaving calls) still lands in the final answer.
    if (this.open === state && !state.custom) {
      this.out.push(
        `event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":${this.sequence++},` +
          `"item_id":"${state.id}","output_index":${state.index},"delta":${JSON.stringify(fn.arguments)}}\n\n`,
      );
    }
  }

  private closeItem(): void {
    const item = this.open;
    if (!item) return;
    this.open = undefined;
    if (item.kind === 'message') this.closePart(item);
    else if (item.kind === 'call') {
      const json = this.itemJson(item, 'completed');
      const at = { item_id: item.id, output_index: item.index };
      if (item.custom) {
        this.emit('response.custom_tool_call_input.delta', { ...at, delta: json.input });
        this.emit('response.custom_tool_call_input.done', { ...at, input: json.input });
      } else this.emit('response.function_call_arguments.done', { ...at, name: json.name, arguments: item.args });
    }
    this.emit('response.output_item.done', { output_index: item.index, item: this.itemJson(item, 'completed') });
  }

  private complete(): void {
    if (!this.started) this.start(undefined);
    if (this.call.compaction) this.addItem({ kind: 'compaction', index: this.items.length, item: compactionItem(this.summary) });
    this.closeItem();
    this.ended = true;
    const { status, incomplete_details } = statusOf(this.finish);
    const response = this.response(status, { incomplete_details, usage: responsesUsageFromChat(this.usage) });
    this.emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  private failWith(message: string): void {
    if (!this.started) this.start(undefined);
    this.closeItem();
    this.ended = true;
    const usage = this.usage === undefined ? null : responsesUsageFromChat(this.usage);
    this.emit('response.failed', { response: this.response('failed', { error: { code: 'server_error', message }, usage }) });
  }
}

/** The byte-level translator the edge drives for a Responses client on a Chat Completions provider. */
export function responsesAnswerFromChat(call: ResponsesCall): AnswerTranslator {
  const events = new ChatToResponsesEvents(call);
  const reader = new SseReader((data) => events.chunk(data === '[DONE]' ? '[DONE]' : parseJson(data)));
  return {
    json: (body) => Buffer.from(JSON.stringify(answerFromChat(call, parseJson(body.toString('utf8'))))),
    fromChatJson: (completion) => Buffer.from(JSON.stringify(answerFromChat(call, completion))),
    // Nothing of a Chat or Responses answer is left out in this direction yet.
    dropped: () => [],
    push(chunk) {
      reader.feed(chunk);
      return events.take();
    },
    end() {
      events.end();
      return events.take();
    },
    fail(message) {
      events.fail(message);
      return events.take();
    },
    error: (status, body) => toOpenAIErrorBody(status, body),
    fromChatChunks: () => events,
  };
}
