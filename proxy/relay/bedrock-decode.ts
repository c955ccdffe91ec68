import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { EVENT_STREAM_CONTENT_TYPE } from '../wire/bedrock/event-stream.js';
import { createInvokeStreamDecoder, type InvokeStreamDecoder } from '../wire/bedrock/invoke-stream.js';
import { createConverseJsonDecoder, createConverseStreamDecoder, type ConverseDecoder } from '../wire/bedrock/converse-answer.js';
import { isSuccess, rewrittenHead } from './head.js';
import { RelayLayer, type AnswerHandler } from './layer.js';

type Controller = Dispatcher.DispatchController;

const SSE = 'text/event-stream; charset=utf-8';

/**
 * A Bedrock provider's success answer as the format it carries, before
 * anything else reads it: its binary event stream as the Messages (or,
 * through Converse, Chat) SSE inside, a whole Converse answer as Chat's. A
 * malformed message ends the call as the provider's break: what was metered
 * before it is billed (edge/steps/meter.ts).
 */
export class BedrockDecode extends RelayLayer {
  private decoder: InvokeStreamDecoder | ConverseDecoder | undefined;
  private broken = false;

  constructor(
    next: AnswerHandler,
    /** The upstream model, when the call goes through Converse. */
    private readonly converse: string | undefined,
  ) {
    super(next);
  }

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    // An error answer is Bedrock's JSON, rewritten further on (bedrock-errors.ts).
    this.next.onResponseStart(c, status, isSuccess(status) ? this.decoding(headers) : headers);
  }

  /** The decoder a success answer needs, if any, and the head of what it decodes to. */
  private decoding(headers: IncomingHttpHeaders): IncomingHttpHeaders {
    const type = headers['content-type'];
    if (typeof type === 'string' && type.includes(EVENT_STREAM_CONTENT_TYPE)) {
      this.decoder = this.converse === undefined ? createInvokeStreamDecoder() : createConverseStreamDecoder(this.converse);
      return rewrittenHead(headers, SSE);
    }
    if (this.converse === undefined) return headers;
    this.decoder = createConverseJsonDecoder(this.converse);
    return rewrittenHead(headers);
  }

  override onResponseData(c: Controller, bytes: Buffer): void {
    if (this.broken) return;
    if (!this.decoder) {
      this.next.onResponseData(c, bytes);
      return;
    }
    let text: string;
    try {
      text = this.decoder.push(bytes);
    } catch (err) {
      this.break(c, err as Error);
      return;
    }
    if (text) this.next.onResponseData(c, Buffer.from(text));
  }

  override onResponseEnd(c: Controller): void {
    if (this.broken) return;
    let rest: string | void;
    try {
      rest = this.decoder?.end();
    } catch (err) {
      this.break(c, err as Error);
      return;
    }
    // A whole Converse answer is all held until its end.
    if (rest) this.next.onResponseData(c, Buffer.from(rest));
    this.next.onResponseEnd(c);
  }

  override onResponseError(c: Controller, err: Error): void {
    if (!this.broken) this.next.onResponseError(c, err);
  }

  /** Reported as the provider's break before the request is aborted, so undici's report of that abort finds the call settled. */
  private break(c: Controller, err: Error): void {
    this.broken = true;
    this.next.onResponseError(c, err);
    if (!c.aborted) c.abort(err);
  }
}
