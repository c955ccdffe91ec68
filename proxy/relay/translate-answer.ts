import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { AnswerTranslator } from '../translate/index.js';
import { isEventStream, rewrittenHead } from './head.js';
import { RelayLayer, type AnswerHandler } from './layer.js';
import { AnswerClosed } from './relay.js';

type Controller = Dispatcher.DispatchController;

/**
 * Set when the provider lacks the client's format: its answer rewritten into
 * the client's (translate/), a stream event by event, a whole answer (success
 * or error) once complete.
 */
export class TranslateAnswer extends RelayLayer {
  /** A whole answer is rewritten only once complete. */
  private whole: Buffer[] | undefined;
  private errorStatus = 0;
  private streaming = false;

  constructor(
    next: AnswerHandler,
    private readonly translator: AnswerTranslator,
  ) {
    super(next);
  }

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return;
    if (status >= 300) this.errorStatus = status;
    if (this.errorStatus || !isEventStream(headers)) this.whole = [];
    else this.streaming = true;
    this.next.onResponseStart(c, status, rewrittenHead(headers));
  }

  override onResponseData(c: Controller, chunk: Buffer): void {
    if (this.whole) this.whole.push(chunk);
    else this.next.onResponseData(c, this.translator.push(chunk));
  }

  override onResponseEnd(c: Controller): void {
    this.next.onResponseData(c, this.rest());
    this.next.onResponseEnd(c);
  }

  override onResponseError(c: Controller, err: Error): void {
    if (!this.streaming) {
      this.next.onResponseError(c, err);
      return;
    }
    // A translated stream ends on an error event in the client's format: its SDK raises that error.
    // Breaking the connection as well could make the client's TCP stack drop the event.
    this.next.onResponseData(c, this.translator.fail('The model provider broke off the answer.'));
    this.next.onResponseError(c, new AnswerClosed(err));
  }

  /** The end of the answer: a whole body (success or error) rewritten, or a stream's closing events. */
  private rest(): Buffer {
    const t = this.translator;
    const whole = this.whole;
    if (!whole) return t.end();
    const body = whole.length === 1 ? whole[0]! : Buffer.concat(whole);
    return this.errorStatus ? t.error(this.errorStatus, body) : t.json(body);
  }
}
