import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

type Controller = Dispatcher.DispatchController;

/** undici's dispatch callbacks as each part of a relay takes them from the part before it: all of them present. */
export interface AnswerHandler {
  onRequestStart(c: Controller): void;
  onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void;
  onResponseData(c: Controller, chunk: Buffer): void;
  onResponseEnd(c: Controller): void;
  onResponseError(c: Controller, err: Error): void;
}

/**
 * A layer around the relay, as undici's own handlers wrap one another: each
 * callback goes on to `next` unchanged, and a layer overrides only what its
 * one concern changes. A call gets only the layers it needs (forward.ts).
 */
export abstract class RelayLayer implements AnswerHandler, Dispatcher.DispatchHandler {
  constructor(protected readonly next: AnswerHandler) {}

  onRequestStart(c: Controller): void {
    this.next.onRequestStart(c);
  }

  onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    this.next.onResponseStart(c, status, headers);
  }

  onResponseData(c: Controller, chunk: Buffer): void {
    this.next.onResponseData(c, chunk);
  }

  onResponseEnd(c: Controller): void {
    this.next.onResponseEnd(c);
  }

  onResponseError(c: Controller, err: Error): void {
    this.next.onResponseError(c, err);
  }
}
