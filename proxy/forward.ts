import type { ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import type { AnswerTranslator } from './translate/index.js';
import type { WireFormat } from './call.js';
import type { ResponseIdReader } from './response-ids.js';
import type { RefusalEpisode } from './upstream-auth/refusal-episode.js';
import { Relay, type ClientSide } from './relay/relay.js';
import type { AnswerHandler } from './relay/layer.js';
import type { ForwardOutcome } from './relay/outcome.js';
import { UsageTapLayer } from './relay/usage-tap.js';
import { PeekForFailover } from './relay/peek-for-failover.js';
import { TranslateAnswer } from './relay/translate-answer.js';
import { DropUsageChunk } from './relay/drop-usage-chunk.js';
import { BedrockDecode } from './relay/bedrock-decode.js';
import { BedrockErrors } from './relay/bedrock-errors.js';
import { BedrockFrames } from './relay/bedrock-frames.js';

export type { ForwardOutcome } from './relay/outcome.js';

export interface ForwardRequest extends ClientSide {
  pool: Pool;
  origin: string;
  path: string;
  /** Flat name/value pairs, as undici takes them. */
  headers: string[];
  body: Buffer;
  /** The format the provider answers in (what the usage tap reads). */
  format: WireFormat;
  dropUsageChunk: boolean;
  /** Set when the provider lacks the client's format: the answer is rewritten into the client's. */
  translate: AnswerTranslator | undefined;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /**
   * Another deployment can take the call: a retryable status (429, 5xx) or a
   * stream whose first event is an error comes back as `retry` instead of
   * reaching the client, so a stream's head waits for its first event.
   */
  failover?: boolean;
  /** Set for a Responses answer the provider may store: its id is read on the side (response-ids.ts). */
  responseId?: ResponseIdReader;
  /**
   * The client called a Bedrock path: InvokeModel's (Claude Code's Bedrock
   * mode), whose streamed answer is framed here in the binary event stream;
   * or Converse's (the AWS SDK's), whose answer the translator writes (its
   * error answers' `x-amzn-errortype`: `errorHeaders`).
   */
  bedrockClient?: 'invoke' | 'converse' | undefined;
  /** Set when the provider is Bedrock (its name): its answers are decoded, its errors rewritten as Messages errors (wire/bedrock/errors.ts). */
  bedrockProvider?: string;
  /** Set when a Bedrock provider serves the call through Converse (the upstream model): its answers are read as Chat's. */
  converse?: string;
  /** A Bedrock provider's refusals of its own credentials, logged once per episode, ended by an accepted call. */
  refusals?: RefusalEpisode | undefined;
}

/**
 * One attempt's relay: the Relay that writes to the client, inside only the
 * layers this call needs, in the order the answer passes them: Bedrock's
 * decoding, failover's first-byte peek, Bedrock's errors, the usage tap,
 * translation (or the usage chunk's drop), Bedrock's framing. A call in the
 * client's own format from a provider of one deployment gets the usage tap alone.
 */
function relayOf(req: ForwardRequest, res: ServerResponse, resolve: (o: ForwardOutcome) => void): AnswerHandler {
  const relay = new Relay(req, res, resolve);
  let handler: AnswerHandler = relay;
  if (req.bedrockClient === 'invoke') handler = new BedrockFrames(handler);
  if (req.translate) handler = new TranslateAnswer(handler, req.translate);
  else if (req.dropUsageChunk) handler = new DropUsageChunk(handler);
  handler = new UsageTapLayer(handler, relay, req.format, req.responseId);
  if (req.bedrockProvider !== undefined) handler = new BedrockErrors(handler, req.bedrockProvider, req.converse !== undefined, req.refusals);
  if (req.failover) handler = new PeekForFailover(handler, relay);
  if (req.bedrockProvider !== undefined) handler = new BedrockDecode(handler, req.converse);
  return handler;
}

/**
 * Sends one call upstream through undici's dispatch and relays the answer as
 * it arrives: bytes unchanged (but for what the call's layers rewrite),
 * paused while the client's socket is full, aborted when the client leaves.
 * Redirects are never followed: dispatch has no redirect handling.
 */
export function forward(req: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
  return new Promise((resolve) => {
    req.pool.dispatch(
      {
        origin: req.origin,
        path: req.path,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        headersTimeout: req.headersTimeoutMs,
        bodyTimeout: req.idleTimeoutMs,
      },
      relayOf(req, res, resolve),
    );
  });
}
