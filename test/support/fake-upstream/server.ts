import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completionFrames, completionJson } from './chat-completions.js';
import { errorBody, type Dialect } from './errors.js';
import { messageFrames, messageJson } from './messages.js';
import { ANTHROPIC_MODELS_JSON, OPENAI_MODELS_JSON } from './models-list.js';
import { checkModelRequest, credentialOf } from './request-checks.js';
import { Responder } from './responder.js';
import type { Behavior, FakeUpstream, FakeUpstreamOptions, OkBehavior, RecordedRequest } from './types.js';
import { countInputTokens, DEFAULT_OUTPUT_TOKENS, planOutput, requestTokenLimit } from './usage.js';

const REQUEST_ID_HEADER: Record<Dialect, string> = { openai: 'x-request-id', anthropic: 'request-id' };

/** A model answer ready to send: one JSON body, or the SSE frames of a stream. */
type Answer = { stream: false; json: string; tokens: number } | { stream: true; frames: string[] };

function noop(): void {}

function parseBody(chunks: Buffer[]): unknown {
  if (chunks.length === 0) return undefined;
  const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const host = options.host ?? '127.0.0.1';
  const defaultBehavior: OkBehavior = options.defaultBehavior ?? { kind: 'ok' };
  const recordRequests = options.recordRequests ?? true;
  const requests: RecordedRequest[] = [];
  const queue: Behavior[] = [];
  const requestWaiters: { count: number; resolve: () => void }[] = [];
  let idleWaiters: (() => void)[] = [];
  let inFlight = 0;
  let closing = false;
  // Ids must differ across fakes and runs, yet cost nothing per request.
  const idPrefix = randomBytes(6).toString('hex');
  let counter = 0;

  function sendJson(res: ServerResponse, dialect: Dialect, status: number, body: string, headers?: Record<string, string>): void {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      [REQUEST_ID_HEADER[dialect]]: `req_${idPrefix}${++counter}`,
      ...headers,
    });
    res.end(body);
  }

  function startStream(res: ServerResponse, dialect: Dialect): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      [REQUEST_ID_HEADER[dialect]]: `req_${idPrefix}${++counter}`,
    });
  }

  function buildAnswer(dialect: Dialect, body: Record<string, unknown>, wanted: number): Answer {
    const n = ++counter;
    const model = body.model as string;
    const inputTokens = countInputTokens(body);
    const output = planOutput(requestTokenLimit(body), wanted);
    const stream = body.stream === true;
    if (dialect === 'openai') {
      const completion = { id: `chatcmpl-${idPrefix}${n}`, created: Math.floor(Date.now() / 1000), model, inputTokens, output };
      if (!stream) return { stream: false, json: completionJson(completion), tokens: output.tokens };
      const options = body.stream_options as { include_usage?: unknown } | null | undefined;
      return { stream: true, frames: completionFrames(completion, options?.include_usage === true) };
    }
    const message = { id: `msg_${idPrefix}${n}`, model, inputTokens, output };
    if (!stream) return { stream: false, json: messageJson(message), tokens: output.tokens };
    return { stream: true, frames: messageFrames(message) };
  }

  async function answerOk(r: Responder, dialect: Dialect, answer: Answer, delayMs: number): Promise<void> {
    if (!answer.stream) {
      // A non-streamed answer takes as long as the same answer would take to stream.
      if (delayMs > 0 && answer.tokens > 0) await r.pause(delayMs * answer.tokens);
      if (r.open) sendJson(r.res, dialect, 200, answer.json);
      return;
    }
    startStream(r.res, dialect);
    if (await r.writeFrames(answer.frames, 0, answer.frames.length, delayMs)) r.res.end();
  }

  function stall(r: Responder, dialect: Dialect, answer: Answer, when: 'before-headers' | 'after-first-event'): void {
    if (when === 'before-headers') return;
    if (answer.stream) {
      startStream(r.res, dialect);
      r.write(answer.frames[0]!);
      return;
    }
    r.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer.json) });
    r.res.flushHeaders();
  }

  async function cutOff(r: Responder, dialect: Dialect, answer: Answer, afterEvents: number): Promise<void> {
    if (answer.stream) {
      startStream(r.res, dialect);
      if (!(await r.writeFrames(answer.frames, 0, Math.min(afterEvents, answer.frames.length), 0))) return;
    } else {
      const bytes = Buffer.from(answer.json);
      r.res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
      r.res.write(bytes.subarray(0, bytes.length >> 1));
    }
    r.hangUp();
  }

  function modelRequest(dialect: Dialect, record: RecordedRequest, r: Responder): void {
    const check = checkModelRequest(dialect, record);
    if (!check.ok) {
      const code = check.status === 401 ? 'invalid_api_key' : null;
      return sendJson(r.res, dialect, check.status, errorBody(dialect, check.status, check.message, code));
    }
    const behavior = queue.shift() ?? defaultBehavior;
    if (behavior.kind === 'error') {
      const body = behavior.body === undefined ? errorBody(dialect, behavior.status)
        : typeof behavior.body === 'string' ? behavior.body : JSON.stringify(behavior.body);
      return sendJson(r.res, dialect, behavior.status, body, behavior.headers);
    }
    const wanted = behavior.kind === 'ok' ? behavior.outputTokens ?? DEFAULT_OUTPUT_TOKENS : DEFAULT_OUTPUT_TOKENS;
    const answer = buildAnswer(dialect, check.body, wanted);
    switch (behavior.kind) {
      case 'ok': void answerOk(r, dialect, answer, behavior.eventDelayMs ?? 0); return;
      case 'stall': stall(r, dialect, answer, behavior.when); return;
      case 'reset': void cutOff(r, dialect, answer, behavior.afterEvents); return;
    }
  }

  function listModels(dialect: Dialect, record: RecordedRequest, r: Responder): void {
    if (credentialOf(record.headers, dialect) === null) return sendJson(r.res, dialect, 401, errorBody(dialect, 401));
    sendJson(r.res, dialect, 200, dialect === 'openai' ? OPENAI_MODELS_JSON : ANTHROPIC_MODELS_JSON);
  }

  function route(record: RecordedRequest, r: Responder): void {
    const { method, path } = record;
    if (method === 'POST' && path === '/v1/chat/completions') return modelRequest('openai', record, r);
    if (method === 'POST' && path === '/anthropic/v1/messages') return modelRequest('anthropic', record, r);
    if (method === 'GET' && path === '/v1/models') return listModels('openai', record, r);
    if (method === 'GET' && path === '/anthropic/v1/models') return listModels('anthropic', record, r);
    const dialect: Dialect = path.startsWith('/anthropic/') ? 'anthropic' : 'openai';
    sendJson(r.res, dialect, 404, errorBody(dialect, 404, `Invalid URL (${method} ${path})`, null));
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
      const path = pathOf(req.url ?? '/');
      const dialect: Dialect = path.startsWith('/anthropic/') ? 'anthropic' : 'openai';
      record = {
        method,
        path,
        headers: req.headers,
        body: parseBody(chunks),
        aborted: false,
        credential: credentialOf(req.headers, dialect),
      };
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
