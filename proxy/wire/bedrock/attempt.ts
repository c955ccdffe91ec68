import type { IncomingHttpHeaders } from 'node:http';
import type { UpstreamAuthorizer } from '../../upstream-auth/authorizer.js';
import type { UpstreamCall } from '../upstream.js';
import { EVENT_STREAM_CONTENT_TYPE } from './event-stream.js';
import { invokeRequest } from './request.js';
import { converseRequest } from './converse-request.js';
import { bedrockPath } from './endpoint.js';
import type { JsonObject } from '../../../shared/json.js';

/** A Chat request (a model served through Converse: converse-model.ts) as Converse's. */
function converseCall(chatBody: Buffer, modelId: string, stream: boolean): { path: string; body: Buffer; dropped: string[] } {
  const body = converseRequest(JSON.parse(chatBody.toString('utf8')) as JsonObject);
  return { path: bedrockPath(modelId, stream ? 'converse-stream' : 'converse'), body: Buffer.from(JSON.stringify(body)), dropped: [] };
}

/**
 * One attempt on a Bedrock deployment: the Messages request the call was
 * planned as, made InvokeModel's (or the Chat request, made Converse's), with headers authorized for this attempt
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
  const invoke = up.format === 'chat' ? converseCall(up.body, modelId, stream) : invokeRequest(up.body, modelId, stream, client['anthropic-beta']);
  const signed = { 'content-type': 'application/json', accept: stream ? EVENT_STREAM_CONTENT_TYPE : 'application/json' };
  const auth = await authorizer.headers({ method: 'POST', origin: up.origin, path: invoke.path, headers: signed, body: invoke.body });
  const headers = ['accept-encoding', 'identity', 'content-length', String(invoke.body.length)];
  for (const [name, value] of Object.entries({ ...signed, ...auth })) headers.push(name, value);
  return { up: { ...up, path: invoke.path, body: invoke.body, dropped: [...up.dropped, ...invoke.dropped] }, headers };
}
