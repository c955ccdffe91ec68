import type { ServerResponse } from 'node:http';
import type { AppError } from '../../shared/errors.js';
import type { WireFormat } from '../call.js';
import { errorBody } from '../wire/errors.js';
import { bedrockErrorBody, bedrockErrorHeaders } from '../wire/bedrock/client-errors.js';
import type { Route } from './steps/step.js';

/** A JSON answer; once the head went out (a stream broke) the connection is cut instead. */
export function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** An error in the client's format; an unexposed one says only that the proxy failed. */
export function sendError(res: ServerResponse, format: WireFormat, err: AppError, headers: Record<string, string> = {}): void {
  const message = err.expose ? err.message : 'The proxy failed to handle this request.';
  send(res, err.status, errorBody(format, err.kind, message, err.code), { ...err.headers, ...headers });
}

/** An error as the route's client reads it: Bedrock's shape on the Converse route (the AWS SDK raises the exception it names), else its format's. */
export function sendCallError(res: ServerResponse, route: Route, err: AppError, headers: Record<string, string> = {}): void {
  if (route.bedrock?.api !== 'converse') {
    sendError(res, route.format, err, headers);
    return;
  }
  const message = err.expose ? err.message : 'The proxy failed to handle this request.';
  send(res, err.status, bedrockErrorBody(message), { ...err.headers, ...headers, ...bedrockErrorHeaders(err.status) });
}
