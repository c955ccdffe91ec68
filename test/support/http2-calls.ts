import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';

/** An HTTP/2 connection with prior knowledge (h2c) to `url`, as the AWS SDK opens one to an `http://` endpoint. */
export function openHttp2(url: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(url);
    session.once('connect', () => resolve(session));
    // Before the connection: the caller's failure. After it, a session's failure reaches its streams too, where their callers see it.
    session.on('error', reject);
  });
}

export interface Http2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request on `session` (a GET without a body, a POST with one, unless `headers` names `:method`); `onStream` sees the stream as it opens (to cut it, say). */
export function http2Call(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  onStream?: (stream: ClientHttp2Stream) => void,
): Promise<Http2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': body === undefined ? 'GET' : 'POST', ':path': path, ...headers });
    let status = 0;
    let answerHeaders: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      answerHeaders = h;
    });
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () => resolve({ status, headers: answerHeaders, text: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', reject);
    onStream?.(stream);
    stream.end(body);
  });
}

/** The headers a format's client sends with its key, over HTTP/2. */
export function keyHeaders(format: 'chat' | 'messages', key: string): Record<string, string> {
  return format === 'chat'
    ? { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    : { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
}
