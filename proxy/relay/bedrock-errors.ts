import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { messagesErrorFromBedrock } from '../wire/bedrock/errors.js';
import type { RefusalEpisode } from '../upstream-auth/refusal-episode.js';
import { RelayLayer, type AnswerHandler } from './layer.js';

type Controller = Dispatcher.DispatchController;

const JSON_HEAD: IncomingHttpHeaders = { 'content-type': 'application/json' };

/**
 * A Bedrock provider's error answer, read whole and answered as a Messages
 * (or, through Converse, Chat) error (wire/bedrock/errors.ts): what follows,
 * a translation to the client's format included, reads it as the provider's own.
 * A refusal of the provider's own credentials opens an episode the log hears
 * of once; the next accepted answer ends it.
 */
export class BedrockErrors extends RelayLayer {
  private error: { status: number; type: string | undefined; chunks: Buffer[] } | undefined;

  constructor(
    next: AnswerHandler,
    private readonly provider: string,
    private readonly converse: boolean,
    private readonly refusals: RefusalEpisode | undefined,
  ) {
    super(next);
  }

  override onResponseStart(c: Controller, status: number, headers: IncomingHttpHeaders): void {
    if (status < 300) {
      this.refusals?.accepted();
      this.next.onResponseStart(c, status, headers);
      return;
    }
    const type = headers['x-amzn-errortype'];
    this.error = { status, type: typeof type === 'string' ? type : undefined, chunks: [] };
  }

  override onResponseData(c: Controller, chunk: Buffer): void {
    if (this.error) this.error.chunks.push(chunk);
    else this.next.onResponseData(c, chunk);
  }

  override onResponseEnd(c: Controller): void {
    const e = this.error;
    if (e) {
      const mapped = messagesErrorFromBedrock(this.provider, e.status, e.type, Buffer.concat(e.chunks), this.converse);
      if (mapped.refusal !== undefined) this.refusals?.refused(mapped.refusal);
      this.next.onResponseStart(c, mapped.status, JSON_HEAD);
      this.next.onResponseData(c, mapped.body);
    }
    this.next.onResponseEnd(c);
  }
}
