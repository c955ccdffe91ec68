import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FakeUpstream } from '../fake-upstream/index.js';
import { bearerOf, type IssuedTokens } from './issued-tokens.js';
import { bodyText, closeServer, listenLoopback, relay, sendJson } from './relay.js';

export interface FakeAzureOpenAi {
  /** `http://127.0.0.1:PORT/openai/v1`: a provider's `chat_completions_base_url` (Azure's v1 API, model in the body). */
  baseUrl: string;
  /** Calls refused for their token: `missing`, `unknown`, `expired`. */
  refusedTokens: string[];
  /** Calls let through. */
  served: number;
  close(): Promise<void>;
}

/**
 * An Azure OpenAI resource with API keys disabled: `POST
 * /openai/v1/chat/completions` and `/openai/deployments/{d}/chat/completions`
 * taken only with an Entra token the fake Entra endpoint issued and that has
 * not expired (401 in Azure's shape otherwise), then answered by the fake
 * upstream's Chat Completions.
 */
export async function startFakeAzureOpenAi(options: { tokens: IssuedTokens; upstream: FakeUpstream }): Promise<FakeAzureOpenAi> {
  const refusedTokens: string[] = [];
  const state = { served: 0 };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await bodyText(req);
    const path = (req.url ?? '/').split('?')[0]!;
    const deployment = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(path)?.[1];
    if (req.method !== 'POST' || (path !== '/openai/v1/chat/completions' && deployment === undefined)) {
      return sendJson(res, 404, { error: { code: '404', message: 'Resource not found' } });
    }
    const verdict = options.tokens.check(bearerOf(req.headers.authorization));
    if (verdict !== 'ok') {
      refusedTokens.push(verdict);
      const message = verdict === 'expired' ? 'Token expired.' : 'Access denied due to invalid subscription key or wrong API endpoint.';
      return sendJson(res, 401, { error: { code: '401', message } });
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, { error: { code: 'BadRequest', message: 'body is not JSON' } });
    }
    state.served++;
    relay(res, `${options.upstream.chatCompletionsBaseUrl}/chat/completions`, deployment === undefined ? body : { ...body, model: deployment }, {
      authorization: 'Bearer azure-fake',
    });
  }

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  const port = await listenLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}/openai/v1`,
    refusedTokens,
    get served() {
      return state.served;
    },
    close: () => closeServer(server),
  };
}
