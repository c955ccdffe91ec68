import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { createUsageChunkFilter, type UsageChunkFilter } from '../wire/chat/usage-chunk-filter.js';
import { isSuccessStream, rewrittenHead } from './head.js';
import { RelayLayer } from './layer.js';

type Controller = Dispatcher.DispatchController;

/** A Chat stream's usage chunk, which the proxy asked for to bill the call, dropped before the client, who did not ask for it. */
export class DropUsageChunk extends RelayLayer {
  private filter: UsageChunkFilter | undefined;

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (isSuccessStream(status, headers)) {
      this.filter = createUsageChunkFilter();
      headers = rewrittenHead(headers);
    }
    this.next.onResponseStart(c, status, headers);
  }

  override onResponseData(c: Controller, chunk: Buffer): void {
    this.next.onResponseData(c, this.filter ? this.filter.push(chunk) : chunk);
  }

  override onResponseEnd(c: Controller): void {
    if (this.filter) this.next.onResponseData(c, this.filter.flush());
    this.next.onResponseEnd(c);
  }
}
