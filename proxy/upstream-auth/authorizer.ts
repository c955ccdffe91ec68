import type { RefusalEpisode } from './refusal-episode.js';

/**
 * How a provider whose credentials are not a static key (a cloud's signed
 * or short-lived ones) authorizes a request. One file per cloud in this
 * folder makes one; the forwarding code asks it once per attempt, so a
 * retry or a failover to another deployment is authorized anew (a SigV4
 * signature covers the moment and the exact bytes sent).
 */
export interface OutgoingRequest {
  method: string;
  /** `https://host[:port]`, as the request goes out. */
  origin: string;
  /** The path and query exactly as sent on the wire (already percent-encoded). */
  path: string;
  /** Headers the request carries before authorization (lower-case names). */
  headers: Record<string, string>;
  body: Buffer;
}

export interface UpstreamAuthorizer {
  /** The headers to add to this one attempt; a refusal is an `AppError` ('unavailable': 503 naming the provider). */
  headers(request: OutgoingRequest): Promise<Record<string, string>>;
  /** Where the cloud's answers refusing these credentials (Bedrock's 403s) are logged, once per episode. */
  episode?: RefusalEpisode | undefined;
}
