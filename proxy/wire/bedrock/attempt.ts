import type { IncomingHttpHeaders } from 'node:http';
import type { UpstreamAuthorizer } from '../../upstream-auth/authorizer.js';
import type { UpstreamCall } from '../upstream.js';
import { EVENT_STREAM_CONTENT_TYPE } from './event-stream.js';
import { invokeRequest } from './request.js';

/**
 * One attempt on a Bedrock deployment: the Messages request the call was
 * planned as, made InvokeModel's, with headers authorized for this attempt
 * alone (a SigV4 signature covers the moment and the bytes). Only the
 * framing is sent beside the credentials: nothing of the client's reaches
 * Bedrock but the body. Throws the authorizer's 503 when the provider has
 * no usable credentials.
 */
export async function bedrockAttempt(
  up: UpstreamCall,
  modelId: string,
  stream: boolean,
  client: IncomingHttpHeaders,
  authorizer: UpstreamAuthorizer,
): Promise<{ up: UpstreamCall; headers: string[] }> {
  const invoke = invokeRequest(up.body, modelId, stream, client['anthropic-beta']);
  const signed = { 'content-type': 'application/json', accept: stream ? EVENT_STREAM_CONTENT_TYPE : 'application/json' };
  const auth = await authorizer.headers({ method: 'POST', origin: up.origin, path: invoke.path, headers: signed, body: invoke.body });
  const headers = ['accept-encoding', 'identity', 'content-length', String(invoke.body.length)];
  for (const [name, value] of Object.entries({ ...signed, ...auth })) headers.push(name, value);
  return { up: { ...up, path: invoke.path, body: invoke.body, dropped: [...up.dropped, ...invoke.dropped] }, headers };
}
