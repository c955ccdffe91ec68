import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FakeUpstream } from '../fake-upstream/index.js';
import { bearerOf, type IssuedTokens } from './issued-tokens.js';
import { bodyText, closeServer, listenLoopback, relay, sendJson } from './relay.js';
import { answerVertexGemini, VERTEX_GOOGLE_PATH } from './vertex-gemini.js';

/** The body version Vertex AI takes for Anthropic's models, in place of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** One call as Vertex saw it: the path's parts (the query of a Gemini call) and what arrived. */
export interface VertexCall {
  project: string;
  location: string;
  publisher: 'anthropic' | 'google';
  model: string;
  method: 'rawPredict' | 'streamRawPredict' | 'generateContent' | 'streamGenerateContent' | 'countTokens';
  query: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface FakeVertex {
  /** `http://127.0.0.1:PORT`: what a provider's `endpoint_url` names (the API's `/v1/projects/…` paths follow). */
  url: string;
  calls: VertexCall[];
  /** Calls refused for their token: `missing`, `unknown`, `expired`, or `api-key` (a key where only tokens are taken). */
  refusedTokens: string[];
  close(): Promise<void>;
}

const PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

function googleUnauthenticated(res: ServerResponse): void {
  sendJson(res, 401, {
    error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.', status: 'UNAUTHENTICATED' },
  });
}

function anthropicInvalid(res: ServerResponse, message: string): void {
  sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
}

/** What Vertex refuses in a Messages body for a model in the path, or undefined. */
function bodyProblem(body: Record<string, unknown>, method: string, isCount: boolean): string | undefined {
  if (body.anthropic_version !== VERTEX_ANTHROPIC_VERSION) return `anthropic_version: expected "${VERTEX_ANTHROPIC_VERSION}"`;
  if (isCount) return typeof body.model === 'string' ? undefined : 'model: Field required';
  if ('model' in body) return 'model: Extra inputs are not permitted';
  if (method === 'streamRawPredict' && body.stream !== true) return 'stream: streamRawPredict requires "stream": true';
  return undefined;
}

/** The token a call carries, checked: 'ok', or why Vertex refuses it (an API key is not a Google token). */
function tokenVerdict(tokens: IssuedTokens, req: IncomingMessage): string {
  if (req.headers['x-goog-api-key'] !== undefined) return 'api-key';
  return tokens.check(bearerOf(req.headers.authorization));
}

/**
 * Vertex AI serving Anthropic's models and Google's: it takes only access
 * tokens the fake Google token endpoint issued (and not yet expired). For
 * Anthropic's, the model in the path and `anthropic_version:
 * "vertex-2023-10-16"` in a body without `model` (`count-tokens:rawPredict`
 * takes the model in the body), betas in the `anthropic-beta` header; the
 * fake upstream then answers as Anthropic does (Messages JSON or SSE, usage
 * with cache tokens). For Google's (Gemini), vertex-gemini.ts.
 */
export async function startFakeVertex(options: { tokens: IssuedTokens; upstream: FakeUpstream }): Promise<FakeVertex> {
  const calls: VertexCall[] = [];
  const refusedTokens: string[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await bodyText(req);
    const match = req.method === 'POST' ? PATH.exec(req.url ?? '') : null;
    const google = req.method === 'POST' ? VERTEX_GOOGLE_PATH.exec(req.url ?? '') : null;
    if (match === null && google === null)
      return sendJson(res, 404, { error: { code: 404, message: `${req.method} ${req.url} not found`, status: 'NOT_FOUND' } });
    const verdict = tokenVerdict(options.tokens, req);
    if (verdict !== 'ok') {
      refusedTokens.push(verdict);
      return googleUnauthenticated(res);
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return anthropicInvalid(res, 'body is not JSON');
    }
    if (google !== null) {
      const [, project, location, model, method, query] = google as unknown as [string, string, string, string, VertexCall['method'], string?];
      const target = { model, action: method, query: query ?? '' };
      if (answerVertexGemini(res, options.upstream.geminiBaseUrl, target, body))
        calls.push({ project, location, publisher: 'google', model, method, query: target.query, headers: req.headers, body });
      return;
    }
    const [, project, location, model, method] = match as unknown as [string, string, string, string, 'rawPredict' | 'streamRawPredict'];
    const isCount = model === 'count-tokens';
    const problem = bodyProblem(body, method, isCount);
    if (problem !== undefined) return anthropicInvalid(res, problem);
    calls.push({ project, location, publisher: 'anthropic', model, method, query: '', headers: req.headers, body });
    const { anthropic_version: _version, ...messages } = body;
    const beta = req.headers['anthropic-beta'];
    const headers: Record<string, string> = {
      'x-api-key': 'vertex-fake',
      'anthropic-version': '2023-06-01',
      ...(typeof beta === 'string' ? { 'anthropic-beta': beta } : {}),
    };
    const base = options.upstream.messagesBaseUrl;
    if (isCount) return relay(res, `${base}/v1/messages/count_tokens`, messages, headers);
    relay(res, `${base}/v1/messages`, { model, ...messages }, headers);
  }

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    refusedTokens,
    close: () => closeServer(server),
  };
}
