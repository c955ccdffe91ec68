import { request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The whole body of a request, as text. */
export async function bodyText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Sends `body` to the fake upstream at `url` and streams its answer back
 * unchanged (status, content type, bytes): a cloud fake checks what its cloud
 * checks, then lets the fake upstream answer as the model would, usage,
 * streams and scripted failures included.
 */
export function relay(res: ServerResponse, url: string, body: unknown, headers: Record<string, string>): void {
  const text = JSON.stringify(body);
  const out = request(
    url,
    { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } },
    (answer) => {
      const type = answer.headers['content-type'];
      res.writeHead(answer.statusCode ?? 502, type === undefined ? {} : { 'content-type': type });
      answer.pipe(res);
    },
  );
  out.on('error', () => res.destroy());
  res.on('close', () => out.destroy());
  out.end(text);
}

/** Listens on a loopback port of the system's choosing; resolves with the port. */
export async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Closes a fake's server, cutting connections a client keeps alive. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
