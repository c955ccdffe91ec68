import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { firstEventIsError, retryableStatus } from '../routing/first-byte.js';
import { retryAfterMs, type FailureReason } from '../routing/health.js';
import { isSuccessStream } from './head.js';
import { RelayLayer, type AnswerHandler } from './layer.js';
import type { Settlement } from './relay.js';

type Controller = Dispatcher.DispatchController;

/**
 * Only when another deployment can take the call: a retryable status (429,
 * 5xx) goes back to routing as `retry` instead of reaching the client, and a
 * stream's head and first bytes wait here until its first event shows it is
 * not an error. Once the client has left, the relay refuses the retry (nobody
 * is left to serve) and the answer goes on as it is.
 */
export class PeekForFailover extends RelayLayer {
  private head: { status: number; headers: IncomingHttpHeaders } | undefined;
  private held: Buffer[] | undefined;
  private retried = false;

  constructor(
    next: AnswerHandler,
    private readonly relay: Settlement,
  ) {
    super(next);
  }

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (retryableStatus(status) && this.failOver(c, `status_${status}` as FailureReason, retryAfterMs(headers['retry-after'], Date.now()))) return;
    if (isSuccessStream(status, headers)) {
      this.head = { status, headers };
      this.held = [];
      return;
    }
    this.next.onResponseStart(c, status, headers);
  }

  override onResponseData(c: Controller, chunk: Buffer): void {
    if (this.retried) return;
    const held = this.held;
    if (!held) {
      this.next.onResponseData(c, chunk);
      return;
    }
    held.push(chunk);
    const verdict = firstEventIsError(held.length === 1 ? chunk : Buffer.concat(held));
    if (verdict === undefined) return;
    if (verdict && this.failOver(c, 'first_event', undefined)) return;
    this.release(c);
  }

  override onResponseEnd(c: Controller): void {
    if (this.retried) return;
    if (this.held) this.release(c);
    this.next.onResponseEnd(c);
  }

  private failOver(c: Controller, reason: FailureReason, after: number | undefined): boolean {
    this.retried = this.relay.failOver(c, reason, after);
    return this.retried;
  }

  /** The stream is sound (or ended): its head and what was held back go on now. */
  private release(c: Controller): void {
    const held = this.held!;
    this.held = undefined;
    this.next.onResponseStart(c, this.head!.status, this.head!.headers);
    for (const chunk of held) this.next.onResponseData(c, chunk);
  }
}
