import type { IncomingHttpHeaders } from 'node:http';
import { EVENT_STREAM_CONTENT_TYPE } from '../wire/bedrock/event-stream.js';

/** A success answer (an error or a redirect is read whole and not billed). */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Whether an answer is a stream: SSE, or Bedrock's binary event stream (a client of Bedrock's path gets it too). */
export function isEventStream(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  return typeof type === 'string' && (type.includes('text/event-stream') || type.includes(EVENT_STREAM_CONTENT_TYPE));
}

/** A success answer streamed: what failover peeks at, and the usage chunk's drop and Bedrock's framing rewrite. */
export function isSuccessStream(status: number, headers: IncomingHttpHeaders): boolean {
  return isSuccess(status) && isEventStream(headers);
}

/** The head of an answer a layer rewrites: the provider's length no longer holds, and the layer may name another content type. */
export function rewrittenHead(headers: IncomingHttpHeaders, contentType?: string): IncomingHttpHeaders {
  const { 'content-length': _length, ...rest } = headers;
  if (contentType !== undefined) rest['content-type'] = contentType;
  return rest;
}
