import { isObject } from '../../../shared/json.js';
import { parseJson, type Json } from './json.js';
import { toOpenAIErrorBody } from './errors.js';
import type { AnswerTranslator, ChatChunkStream } from '../../translate/types.js';
import { answerToChat, chatIdFrom, chatToolCall, chatUsageFromResponses, finishReason } from './answer-to-chat.js';
import { Outbox, SseReader } from '../sse.js';

/**
 * A Responses stream → Chat Completions chunks, event by event: the first
 * event opens the assistant's turn; `output_text` and refusal deltas become
 * content and refusal deltas; each tool call item becomes a `tool_calls`
 * entry (its id and name first, then argument fragments). The final event
 * (`response.completed` / `.incomplete`) gives the finish reason and, when
 * the client asked for it, the usage chunk; `response.failed` and `error`
 * events become an error chunk. Reasoning and hosted tool items are left out.
 */

interface CallState {
  index: number;
  /** Arguments sent so far, so a call whose arguments came only in its `.done` event still gets them. */
  sent: string;
  custom: boolean;
}

export class ResponsesToChatChunks {
  private readonly chunks: Json[] = [];
  private started = false;
  private ended = false;
  private id = 'chatcmpl-';
  private created = Math.floor(Date.now() / 1000);
  private readonly calls = new Map<string, CallState>();
  private doneSent = false;
  private errored = false;

  constructor(
    private readonly alias: string,
    private readonly includeUsage: boolean,
  ) {}

  /** One parsed Responses event. */
  event(event: unknown): void {
    if (this.ended || !isObject(event)) return;
    switch (event.type) {
      case 'response.created':
        return this.start(event.response);
      case 'response.output_text.delta':
        if (typeof event.delta === 'string' && event.delta) this.delta({ content: event.delta });
        return;
      case 'response.refusal.delta':
        if (typeof event.delta === 'string' && event.delta) this.delta({ refusal: event.delta });
        return;
      case 'response.output_item.added':
        if (isObject(event.item)) this.addCall(event.item);
        return;
      case 'response.function_call_arguments.delta':
        if (typeof event.item_id === 'string' && typeof event.delta === 'string') this.args(event.item_id, event.delta);
        return;
      case 'response.output_item.done':
        if (isObject(event.item)) this.doneCall(event.item);
        return;
      case 'response.completed':
      case 'response.incomplete':
        return this.finish(event.response);
      case 'response.failed':
      case 'error':
        return this.failWith(event);
    }
  }

  /** The provider's stream ended; undefined finish means it broke off. */
  end(): void {
    if (!this.ended) this.failWith({ message: 'The model provider ended the answer before it finished.' });
  }

  fail(message: string): void {
    if (!this.ended) this.failWith({ message });
  }

  /** The Chat chunks made so far (`'[DONE]'` marks the end), handed out once. */
  take(): (Json | '[DONE]')[] {
    const out: (Json | '[DONE]')[] = this.chunks.splice(0);
    if (this.ended && this.doneSent === false) {
      this.doneSent = true;
      if (!this.errored) out.push('[DONE]');
    }
    return out;
  }

  private start(response: unknown): void {
    if (this.started) return;
    this.started = true;
    if (isObject(response)) {
      this.id = chatIdFrom(response.id);
      if (typeof response.created_at === 'number') this.created = response.created_at;
    }
    this.delta({ role: 'assistant', content: '' });
  }

  private chunk(choice: Json | undefined, usage?: Json): void {
    const chunk: Json = { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.alias, choices: choice ? [choice] : [] };
    if (usage !== undefined) chunk.usage = usage;
    this.chunks.push(chunk);
  }

  private delta(delta: Json, finish: string | null = null): void {
    if (!this.started) this.start(undefined);
    this.chunk({ index: 0, delta, logprobs: null, finish_reason: finish });
  }

  private addCall(item: Json): void {
    const call = chatToolCall({ ...item, arguments: '', input: undefined });
    if (!call || typeof item.id !== 'string' || this.calls.has(item.id)) return;
    const state: CallState = { index: this.calls.size, sent: '', custom: item.type === 'custom_tool_call' };
    this.calls.set(item.id, state);
    (call.function as Json).arguments = '';
    this.delta({ tool_calls: [{ index: state.index, ...call }] });
  }

  private args(itemId: string, fragment: string): void {
    const state = this.calls.get(itemId);
    if (!state || state.custom || fragment === '') return;
    state.sent += fragment;
    this.delta({ tool_calls: [{ index: state.index, function: { arguments: fragment } }] });
  }

  /** A call's whole arguments (or a free-form call's input, JSON-wrapped) when the deltas did not carry them all. */
  private doneCall(item: Json): void {
    if (typeof item.id !== 'string') return;
    if (!this.calls.has(item.id)) this.addCall(item);
    const state = this.calls.get(item.id);
    const call = chatToolCall(item);
    if (!state || !call) return;
    const full = (call.function as Json).arguments as string;
    if (full.startsWith(state.sent) && full.length > state.sent.length) {
      this.delta({ tool_calls: [{ index: state.index, function: { arguments: full.slice(state.sent.length) } }] });
      state.sent = full;
    }
  }

  private finish(response: unknown): void {
    const r = isObject(response) ? response : {};
    if (!this.started) this.start(r);
    this.delta({}, finishReason(r, this.calls.size > 0));
    if (this.includeUsage) this.chunk(undefined, chatUsageFromResponses(r.usage));
    this.ended = true;
  }

  private failWith(event: Json): void {
    const response = isObject(event.response) ? event.response : {};
    const error = isObject(response.error) ? response.error : event;
    const message = typeof error.message === 'string' && error.message ? error.message : 'The model provider reported an error mid-answer.';
    const code = typeof error.code === 'string' ? error.code : null;
    this.chunks.push({ error: { message, type: code === 'rate_limit_exceeded' ? 'rate_limit_error' : 'api_error', param: null, code } });
    this.ended = true;
    this.errored = true;
  }
}

function frames(chunks: readonly (Json | '[DONE]')[], out: Outbox): void {
  for (const c of chunks) out.push(c === '[DONE]' ? 'data: [DONE]\n\n' : `data: ${JSON.stringify(c)}\n\n`);
}

/**
 * The byte-level translator for a Chat client on a Responses provider.
 * `includeUsage`: the client asked for the usage chunk (`stream_options.include_usage`).
 */
export function chatAnswerFromResponses(alias: string, includeUsage: boolean): AnswerTranslator {
  const chunks = new ResponsesToChatChunks(alias, includeUsage);
  const out = new Outbox();
  const reader = new SseReader((data) => chunks.event(parseJson(data)));
  const drain = (): Buffer => {
    frames(chunks.take(), out);
    return out.take();
  };
  return {
    json: (body) => Buffer.from(JSON.stringify(answerToChat(alias, parseJson(body.toString('utf8'))))),
    chatJson: (body) => answerToChat(alias, parseJson(body.toString('utf8'))),
    // Nothing of a Chat or Responses answer is left out in this direction yet.
    dropped: () => [],
    push(chunk) {
      reader.feed(chunk);
      return drain();
    },
    end() {
      chunks.end();
      return drain();
    },
    fail(message) {
      chunks.fail(message);
      return drain();
    },
    error: (status, body) => toOpenAIErrorBody(status, body),
    // The chunks `frames` would write, handed on as they are (two hops, chain.ts).
    chatChunks(sink): ChatChunkStream {
      const hand = () => {
        for (const c of chunks.take()) sink(c);
      };
      return {
        push(chunk) {
          reader.feed(chunk);
          hand();
        },
        end() {
          chunks.end();
          hand();
        },
      };
    },
  };
}
