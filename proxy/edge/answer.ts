import type { ServerResponse } from 'node:http';
import type { AppError } from '../../shared/errors.js';
import type { WireFormat } from '../call.js';
import { errorBody } from '../wire/errors.js';

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
