import type { NowMs } from '../../shared/clock.js';
import type { AwsCredentialSource } from './aws-credentials.js';
import { signAwsRequest } from './aws-sign.js';
import type { OutgoingRequest, UpstreamAuthorizer } from './authorizer.js';
import type { RefusalEpisode } from './refusal-episode.js';

/** Bedrock's runtime API signs under the name `bedrock`, whatever its host is called. */
const BEDROCK_SIGNING_NAME = 'bedrock';

function queryOf(path: string): { path: string; query: Record<string, string | string[]> } {
  const q = path.indexOf('?');
  if (q === -1) return { path, query: {} };
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(path.slice(q + 1))) {
    const had = query[k];
    query[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return { path: path.slice(0, q), query };
}

/**
 * A Bedrock provider's requests signed with SigV4 for its region, with
 * credentials from `credentials` (the standard chain), signed anew for
 * every attempt at the clock's time.
 */
export function createAwsSigV4Authorizer(options: {
  region: string;
  credentials: AwsCredentialSource;
  nowMs: NowMs;
  episode?: RefusalEpisode;
}): UpstreamAuthorizer {
  return {
    episode: options.episode,
    async headers(request: OutgoingRequest) {
      const credentials = await options.credentials.get();
      const { path, query } = queryOf(request.path);
      const signed = await signAwsRequest(
        { method: request.method, host: new URL(request.origin).host, path, query, headers: request.headers, body: request.body },
        credentials,
        { region: options.region, service: BEDROCK_SIGNING_NAME, at: new Date(options.nowMs()), signBody: true },
      );
      // `host` was signed as undici will send it (the origin's host); only what signing added goes back.
      const added: Record<string, string> = {};
      for (const [name, value] of Object.entries(signed)) if (name !== 'host' && request.headers[name] === undefined) added[name] = value;
      return added;
    },
  };
}

/** A Bedrock API key (from the provider's `api_key_env`) goes as a bearer token, in place of a signature. */
export function createBedrockApiKeyAuthorizer(apiKey: string, episode?: RefusalEpisode): UpstreamAuthorizer {
  const headers = { authorization: `Bearer ${apiKey}` };
  return { headers: () => Promise.resolve(headers), episode };
}
