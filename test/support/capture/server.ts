import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import { chatAnswer, messagesAnswer, modelsAnswer, notFound, responsesAnswer, type Answer, type ToolCall } from './answers.js';
import { geminiAnswer, geminiModels } from './gemini-answers.js';

/** One request as a client sent it, secrets redacted, the body decompressed and parsed. */
export type Captured = {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** What the server answered: the status, or `upgrade` for a WebSocket attempt (answered 426). */
  answered: number;
  content_encoding?: string;
  body_bytes?: number;
  body?: unknown;
};

export type CaptureServer = {
  url: string;
  requests: Captured[];
  /** Set to make Messages answers call this tool once (a tool round trip). */
  tool: ToolCall | undefined;
  close(): Promise<void>;
};

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'cookie', 'proxy-authorization']);

function redactedHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const text = Array.isArray(value) ? value.join(', ') : (value ?? '');
    // The scheme stays: whether a client sends Bearer or a bare key matters.
    out[name] = SECRET_HEADERS.has(name) ? text.replace(/^(Bearer |Basic )?.*$/, '$1<redacted>') : text;
  }
  return out;
}

/** Google's clients may send the key as `?key=`. */
function redactedQuery(url: URL): Record<string, string> {
  const query = Object.fromEntries(url.searchParams);
  if (query.key !== undefined) query.key = '<redacted>';
  return query;
}

function decompress(raw: Buffer, encoding: string | undefined): Buffer {
  switch (encoding) {
    case undefined:
    case 'identity':
      return raw;
    case 'gzip':
      return gunzipSync(raw);
    case 'br':
      return brotliDecompressSync(raw);
    case 'zstd':
      return zstdDecompressSync(raw);
    case 'deflate':
      return inflateSync(raw);
    default:
      throw new Error(`unknown content-encoding ${encoding}`);
  }
}

function parsed(raw: Buffer, encoding: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const text = decompress(raw, encoding).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function answerFor(method: string, path: string, query: Record<string, string>, body: unknown, tool: ToolCall | undefined): Answer {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (method === 'HEAD') return { status: 200, type: 'text/plain', body: '' };
  const gemini = method === 'POST' ? geminiAnswer(path, query, fields, tool) : undefined;
  if (gemini !== undefined) return gemini;
  if (method === 'GET' && path.endsWith('/v1beta/models')) return geminiModels();
  if (method === 'POST' && path.endsWith('/responses')) return responsesAnswer(fields);
  if (method === 'POST' && path.endsWith('/messages/count_tokens')) return { status: 200, type: 'application/json', body: '{"input_tokens":10}' };
  if (method === 'POST' && path.endsWith('/messages')) return messagesAnswer(fields, tool);
  // Vertex AI's Anthropic paths: the count first, as `count-tokens:rawPredict` also ends in `:rawPredict`.
  if (method === 'POST' && path.endsWith('/count-tokens:rawPredict')) return { status: 200, type: 'application/json', body: '{"input_tokens":10}' };
  if (method === 'POST' && /:(stream)?rawPredict$/i.test(path))
    return messagesAnswer({ model: path.replace(/^.*\/models\/|:.*$/g, ''), ...fields }, tool);
  if (method === 'POST' && path.endsWith('/chat/completions')) return chatAnswer(fields);
  if (method === 'GET' && path.endsWith('/models')) return modelsAnswer();
  return notFound(`${method} ${path}`);
}

/** A loopback server that records every request (and WebSocket attempt) and answers plausibly. */
export async function startCaptureServer(): Promise<CaptureServer> {
  const requests: Captured[] = [];
  const state: { tool: ToolCall | undefined } = { tool: undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://capture');
      const raw = Buffer.concat(chunks);
      const encoding = req.headers['content-encoding'];
      const entry: Captured = {
        method: req.method ?? '',
        path: url.pathname,
        query: redactedQuery(url),
        headers: redactedHeaders(req),
        answered: 0,
      };
      if (encoding !== undefined) entry.content_encoding = encoding;
      if (raw.length > 0) entry.body_bytes = raw.length;
      let answer: Answer;
      try {
        entry.body = parsed(raw, encoding);
        answer = answerFor(entry.method, entry.path, entry.query, entry.body, state.tool);
      } catch (err) {
        entry.body = `<undecodable: ${(err as Error).message}>`;
        answer = { status: 400, type: 'application/json', body: '{"error":{"message":"bad body"}}' };
      }
      entry.answered = answer.status;
      requests.push(entry);
      res.writeHead(answer.status, { 'content-type': answer.type });
      res.end(answer.body);
    });
  });
  // Codex tries a WebSocket first on /responses; 426 tells it to use HTTP at once.
  server.on('upgrade', (req, socket) => {
    const url = new URL(req.url ?? '/', 'http://capture');
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: redactedHeaders(req),
      answered: 426,
    });
    socket.end('HTTP/1.1 426 Upgrade Required\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get tool() {
      return state.tool;
    },
    set tool(value) {
      state.tool = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
