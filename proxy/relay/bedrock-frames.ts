import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { EVENT_STREAM_CONTENT_TYPE } from '../wire/bedrock/event-stream.js';
import { createInvokeStreamEncoder, type InvokeStreamEncoder } from '../wire/bedrock/invoke-stream.js';
import { isSuccessStream, rewrittenHead } from './head.js';
import { RelayLayer } from './layer.js';

type Controller = Dispatcher.DispatchController;

/** For a client of Bedrock's path (Claude Code's Bedrock mode): the Messages stream it gets, framed as Bedrock frames it. */
export class BedrockFrames extends RelayLayer {
  private encoder: InvokeStreamEncoder | undefined;

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (isSuccessStream(status, headers)) {
      this.encoder = createInvokeStreamEncoder();
      headers = rewrittenHead(headers, EVENT_STREAM_CONTENT_TYPE);
    }
    this.next.onResponseStart(c, status, headers);
  }

  override onResponseData(c: Controller, chunk: Buffer): void {
    this.next.onResponseData(c, this.encoder && chunk.length ? this.encoder.push(chunk) : chunk);
  }
}
