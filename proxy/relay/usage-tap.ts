import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { WireFormat } from '../call.js';
import type { ResponseIdReader } from '../response-ids.js';
import { createUsageTap, type UsageTap } from '../wire/usage-tap.js';
import { isEventStream, isSuccess } from './head.js';
import { RelayLayer, type AnswerHandler } from './layer.js';
import type { Settlement } from './relay.js';

type Controller = Dispatcher.DispatchController;

/**
 * Reads every byte of a success answer on the side, in the provider's own
 * format (before any translation), for its bill: the usage tap, handed to the
 * relay for the outcome, and the response id reader when the provider may
 * store the response (response-ids.ts). The bytes go on unchanged, and are
 * read on after the client left.
 */
export class UsageTapLayer extends RelayLayer {
  private tap: UsageTap | undefined;
  private eventStream = false;

  constructor(
    next: AnswerHandler,
    private readonly relay: Settlement,
    private readonly format: WireFormat,
    private readonly responseId: ResponseIdReader | undefined,
  ) {
    super(next);
  }

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (isSuccess(status)) {
      this.eventStream = isEventStream(headers);
      this.tap = createUsageTap(this.format, this.eventStream);
      this.relay.tapped(this.tap);
    }
    this.next.onResponseStart(c, status, headers);
  }

  override onResponseData(c: Controller, chunk: Buffer): void {
    if (this.tap) {
      this.tap.feed(chunk);
      this.responseId?.feed(chunk, this.eventStream);
    }
    this.next.onResponseData(c, chunk);
  }
}
