import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildAnswer, type Answer } from './answers.js';
import { answerOk, cutOff, drop, sendJson, stall, streamError, type Reply } from './behaviors.js';
import { errorBody, type Dialect } from './errors.js';
import { IdSource } from './ids.js';
import { embeddingsAnswer } from './embeddings.js';
import { geminiCount, geminiFrames, geminiJson, geminiPath, planGeminiAnswer } from './gemini.js';
import { ANTHROPIC_MODELS_JSON, GOOGLE_MODELS_JSON, OPENAI_MODELS_JSON } from './models-list.js';
import { checkModelRequest, credentialOf } from './request-checks.js';
import { Responder } from './responder.js';
import type { Behavior, FakeFormats, FakeUpstream, FakeUpstreamOptions, OkBehavior, RecordedRequest, Wire } from './types.js';
import { countInputTokens, DEFAULT_OUTPUT_TOKENS } from './usage.js';

function noop(): void {}

function bodyText(chunks: Buffer[]): string {
  return chunks.length === 0 ? '' : (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Which provider a path impersonates, for error shapes and header preference. */
function dialectOf(path: string): Dialect {
  if (path.startsWith('/v1beta/') || geminiPath(path) !== undefined) return 'google';
  return path.startsWith('/anthropic/') ? 'anthropic' : 'openai';
}

/** The model-call path of each format. */
const MODEL_PATHS: Record<string, Wire> = {
  '/v1/chat/completions': 'chat',
  '/anthropic/v1/messages': 'messages',
  '/v1/responses': 'responses',
};

/** The formats a `formats` option speaks. */
function spoken(formats: FakeFormats): ReadonlySet<Wire> {
  if (formats === 'all') return new Set(['chat', 'messages', 'responses', 'gemini']);
  if (formats === 'both') return new Set(['chat', 'messages']);
  return new Set([formats]);
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const host = options.host ?? '127.0.0.1';
  const defaultBehavior: OkBehavior = options.defaultBehavior ?? { kind: 'ok' };
  const recordRequests = options.recordRequests ?? true;
  const requireKey = options.requireKey ?? true;
  const formats = spoken(options.formats ?? 'all');
  // Model lists and token counts belong to a provider: OpenAI's to one speaking Chat or Responses.
  const speaksDialect = (dialect: Dialect) =>
    dialect === 'google'
      ? formats.has('gemini')
      : dialect === 'anthropic'
        ? formats.has('messages')
        : formats.has('chat') || formats.has('responses');
  const requests: RecordedRequest[] = [];
  const queue: Behavior[] = [];
  const requestWaiters: { count: number; resolve: () => void }[] = [];
  let idleWaiters: (() => void)[] = [];
  let inFlight = 0;
  let closing = false;
  const ids = new IdSource();

  function modelRequest(reply: Reply, record: RecordedRequest, wire: Wire): void {
    const { dialect } = reply;
    const check = checkModelRequest(wire, record, requireKey);
    if (!check.ok) {
      const code = check.status === 401 ? 'invalid_api_key' : null;
      return sendJson(reply, check.status, errorBody(dialect, check.status, check.message, code));
    }
    const behavior = queue.shift() ?? defaultBehavior;
    if (behavior.kind === 'error') {
      const body =
        behavior.body === undefined
          ? errorBody(dialect, behavior.status)
          : typeof behavior.body === 'string'
            ? behavior.body
            : JSON.stringify(behavior.body);
      return sendJson(reply, behavior.status, body, behavior.headers);
    }
    const wanted = behavior.kind === 'ok' ? (behavior.outputTokens ?? DEFAULT_OUTPUT_TOKENS) : DEFAULT_OUTPUT_TOKENS;
    let answer = answerFor(wire, record, check.body, wanted, behavior.kind === 'ok' ? behavior : undefined);
    if (behavior.kind === 'ok' && behavior.outputCountAs !== undefined) answer = withOutputCount(answer, behavior.outputCountAs);
    switch (behavior.kind) {
      case 'ok':
        void answerOk(reply, answer, behavior.eventDelayMs ?? 0);
        return;
      case 'stall':
        stall(reply, answer, behavior.when, behavior.afterEvents ?? 1);
        return;
      case 'reset':
        void cutOff(reply, answer, behavior.afterEvents);
        return;
      case 'drop':
        drop(reply);
        return;
      case 'stream-error':
        streamError(reply);
        return;
    }
  }

  /** A Gemini call names its model and streaming in the path (`:streamGenerateContent`, `?alt=sse`), not in the body. */
  function answerFor(wire: Wire, record: RecordedRequest, body: Record<string, unknown>, wanted: number, ok: OkBehavior | undefined): Answer {
    if (wire !== 'gemini') return buildAnswer(wire, body, wanted, ids, ok);
    const target = geminiPath(record.path)!;
    const answer = planGeminiAnswer(target.model, body, wanted, ids, ok);
    if (target.action === 'generateContent') return { stream: false, json: geminiJson(answer), tokens: answer.output.tokens };
    const sse = new URLSearchParams(record.query).get('alt') === 'sse';
    return { stream: true, frames: geminiFrames(answer, sse), ...(sse ? {} : { contentType: 'application/json' }) };
  }

  function listModels(reply: Reply, record: RecordedRequest): void {
    if (record.credential === null && requireKey) return sendJson(reply, 401, errorBody(reply.dialect, 401));
    const lists: Record<Dialect, string> = { openai: OPENAI_MODELS_JSON, anthropic: ANTHROPIC_MODELS_JSON, google: GOOGLE_MODELS_JSON };
    sendJson(reply, 200, lists[reply.dialect]);
  }

  /** A queued error answers a call that generates nothing (a count, embeddings) instead; true when it did. */
  function answeredQueuedError(reply: Reply): boolean {
    const behavior = queue[0];
    if (behavior?.kind !== 'error') return false;
    queue.shift();
    sendJson(reply, behavior.status, behavior.body === undefined ? errorBody(reply.dialect, behavior.status) : JSON.stringify(behavior.body));
    return true;
  }

  /** Token counting (Anthropic's count_tokens, OpenAI's responses/input_tokens): the input tokens the same body would be billed as a model call. */
  function countTokens(reply: Reply, record: RecordedRequest, wire: Wire = 'messages'): void {
    const check = checkModelRequest(wire, record, requireKey, 'count');
    if (!check.ok) return sendJson(reply, check.status, errorBody(reply.dialect, check.status, check.message));
    if (answeredQueuedError(reply)) return;
    if (wire === 'gemini') return sendJson(reply, 200, geminiCount(check.body));
    const tokens = countInputTokens(check.body);
    sendJson(reply, 200, JSON.stringify(wire === 'responses' ? { object: 'response.input_tokens', input_tokens: tokens } : { input_tokens: tokens }));
  }

  /** OpenAI's `/v1/embeddings`, on a provider that speaks Chat Completions; a queued error is answered instead. */
  function embeddings(reply: Reply, record: RecordedRequest): void {
    if (record.credential === null && requireKey) return sendJson(reply, 401, errorBody(reply.dialect, 401, undefined, 'invalid_api_key'));
    if (answeredQueuedError(reply)) return;
    const answer = embeddingsAnswer(record.body);
    if (answer === undefined) return sendJson(reply, 400, errorBody(reply.dialect, 400, 'model and input are required.'));
    sendJson(reply, 200, answer);
  }

  function route(record: RecordedRequest, r: Responder): void {
    const { method, path } = record;
    const reply: Reply = { r, dialect: dialectOf(path), requestId: ids.next('req_') };
    const wire = method === 'POST' ? MODEL_PATHS[path] : undefined;
    if (wire !== undefined && formats.has(wire)) return modelRequest(reply, record, wire);
    const gemini = method === 'POST' && formats.has('gemini') ? geminiPath(path) : undefined;
    if (gemini?.action === 'countTokens') return countTokens(reply, record, 'gemini');
    if (gemini?.action === 'generateContent' || gemini?.action === 'streamGenerateContent') return modelRequest(reply, record, 'gemini');
    if (method === 'POST' && path === '/v1/responses/input_tokens' && formats.has('responses')) return countTokens(reply, record, 'responses');
    if (method === 'POST' && path === '/v1/embeddings' && formats.has('chat')) return embeddings(reply, record);
    if (speaksDialect(reply.dialect)) {
      if (method === 'GET' && (path === '/v1/models' || path === '/anthropic/v1/models' || path === '/v1beta/models'))
        return listModels(reply, record);
      if (method === 'POST' && path === '/anthropic/v1/messages/count_tokens') return countTokens(reply, record);
    }
    sendJson(reply, 404, errorBody(reply.dialect, 404, `Invalid URL (${method} ${path})`, null));
  }

  function recorded(record: RecordedRequest): void {
    requests.push(record);
    for (let i = requestWaiters.length - 1; i >= 0; i--) {
      const waiter = requestWaiters[i]!;
      if (requests.length >= waiter.count) {
        requestWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    inFlight++;
    const r = new Responder(res);
    let record: RecordedRequest | undefined;
    req.on('error', noop);
    res.on('error', noop);
    res.once('close', () => {
      if (record !== undefined && !res.writableFinished && !r.hungUp && !closing) record.aborted = true;
      if (--inFlight === 0 && idleWaiters.length > 0) {
        const waiters = idleWaiters;
        idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const path = pathOf(url);
      record = {
        method,
        path,
        query: url.slice(path.length),
        headers: req.headers,
        raw: bodyText(chunks),
        body: undefined,
        aborted: false,
        credential: credentialOf(req.headers, dialectOf(path), url.slice(path.length)),
      };
      record.body = parseBody(record.raw);
      if (recordRequests) recorded(record);
      route(record, r);
    });
  }

  const server = createServer({ noDelay: true }, handle);
  // Benchmarks reuse connections for a long time; don't let idle ones drop under them.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    chatCompletionsBaseUrl: `${url}/v1`,
    messagesBaseUrl: `${url}/anthropic`,
    responsesBaseUrl: `${url}/v1`,
    geminiBaseUrl: url,
    requests,
    enqueue(...behaviors: Behavior[]) {
      queue.push(...behaviors);
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
    },
    waitForRequests(count: number) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => requestWaiters.push({ count, resolve }));
    },
    idle() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    close() {
      closing = true;
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/** A provider reporting malformed usage: every output count replaced by `as`. */
function withOutputCount(answer: Answer, as: string): Answer {
  const swap = (text: string) => text.replace(/"(completion_tokens|output_tokens|candidatesTokenCount)":\d+/g, `"$1":${as}`);
  return answer.stream ? { stream: true, frames: answer.frames.map(swap) } : { ...answer, json: swap(answer.json) };
}
