import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { isObject } from '../../../shared/json.js';
import { createEventStreamWriter, EVENT_STREAM_CONTENT_TYPE, type EventStreamWriter } from '../../../proxy/wire/bedrock/event-stream.js';
import { IdSource } from '../fake-upstream/ids.js';
import {
  chunkMessage,
  converseAnswer,
  converseJson,
  converseStreamMessages,
  exceptionMessage,
  invokeAnswer,
  type FakeBedrockUsage,
} from './answers.js';
import { checkSigV4, isRefusal, type AwsRefusal, type FakeAwsIdentity } from './sigv4-check.js';
import { invokeBodyRefusal } from './invoke-checks.js';

export type FakeBedrockBehavior =
  | ({ kind: 'ok' } & FakeBedrockUsage)
  /** Refused before any answer, as Bedrock refuses (`ThrottlingException` 429, `ServiceUnavailableException` 503…). */
  | { kind: 'error'; status: number; type: string; message: string }
  /** A streamed answer that breaks off with an exception message after `afterEvents` events. */
  | { kind: 'exception'; afterEvents: number; exception: string; message: string }
  /** A streamed answer whose message after `afterEvents` events has a broken checksum. */
  | { kind: 'corrupt'; afterEvents: number };

export type BedrockOperationName = 'invoke' | 'invoke-with-response-stream' | 'converse' | 'converse-stream';

export interface FakeBedrockRequest {
  operation: BedrockOperationName;
  /** The model id, URL-decoded. */
  modelId: string;
  /** The path as it arrived (the model id percent-encoded). */
  rawPath: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** Who the call was authorized as: an access key id, or `api-key`. */
  caller: string;
}

export interface FakeBedrockOptions {
  region?: string;
  /** Long-lived or session identities whose signatures are accepted. */
  identities?: FakeAwsIdentity[];
  /** Bedrock API keys accepted as bearer tokens. */
  apiKeys?: string[];
  /** Bedrock's clock, for signatures made too far from it. */
  nowMs?: () => number;
  /** How long credentials minted by the container-credentials endpoint (`GET /credentials`) are accepted. */
  credentialLifetimeMs?: number;
  /** The `anthropic_beta` values InvokeModel accepts; any other is refused as Bedrock refuses it. Unset: all. */
  acceptedBetas?: readonly string[];
}

export interface FakeBedrock {
  /** http://127.0.0.1:PORT, for `endpoint_url` or `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`. */
  url: string;
  /** `AWS_CONTAINER_CREDENTIALS_FULL_URI`: every GET mints fresh session credentials. */
  credentialsUrl: string;
  region: string;
  /** Accepted model calls, in order. */
  requests: FakeBedrockRequest[];
  /** Refused calls, in order, with what Bedrock answered. */
  refusals: AwsRefusal[];
  /** Credentials minted by the credentials endpoint, in order. */
  minted: FakeAwsIdentity[];
  enqueue(...behaviors: FakeBedrockBehavior[]): void;
  /** Accepts one more identity (e.g. one a test hands to the proxy through the environment). */
  addIdentity(identity: FakeAwsIdentity): void;
  close(): Promise<void>;
}

const OPERATIONS = new Set<string>(['invoke', 'invoke-with-response-stream', 'converse', 'converse-stream']);
const ERROR_NAMESPACE = ':http://internal.amazon.com/coral/com.amazon.bedrock/';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, r: AwsRefusal): void {
  const body = JSON.stringify({ message: r.message });
  res.writeHead(r.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-amzn-errortype': `${r.type}${ERROR_NAMESPACE}`,
    'x-amzn-requestid': randomUUID(),
  });
  res.end(body);
}

function sendJson(res: ServerResponse, json: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(json);
}

/** A checksum broken in the message's last byte: what a decoder must refuse. */
function corrupted(message: Buffer): Buffer {
  const copy = Buffer.from(message);
  copy[copy.length - 1]! ^= 0xff;
  return copy;
}

async function writeStream(res: ServerResponse, messages: Buffer[], behavior: FakeBedrockBehavior, writer: EventStreamWriter): Promise<void> {
  res.writeHead(200, {
    'content-type': EVENT_STREAM_CONTENT_TYPE,
    'x-amzn-bedrock-content-type': 'application/json',
    'x-amzn-requestid': randomUUID(),
  });
  const stopAt = behavior.kind === 'exception' || behavior.kind === 'corrupt' ? behavior.afterEvents : messages.length;
  for (const m of messages.slice(0, stopAt)) {
    if (!res.write(m)) await new Promise((r) => res.once('drain', r));
  }
  if (behavior.kind === 'exception') res.write(exceptionMessage(writer, behavior.exception, behavior.message));
  if (behavior.kind === 'corrupt') res.write(corrupted(messages[stopAt] ?? messages[messages.length - 1]!));
  res.end();
}

/**
 * HTTP/1.1 and cleartext HTTP/2 on one port, told apart by the HTTP/2
 * preface (`PRI * HTTP/2.0`): the AWS SDK's Bedrock runtime client speaks
 * HTTP/2 only, the Anthropic SDK and the proxy HTTP/1.1. Both take the
 * same handler through Node's HTTP/2 compatibility API.
 */
function listenBothProtocols(serve: (req: IncomingMessage, res: ServerResponse) => void) {
  const h1 = createServer(serve);
  const h2 = createHttp2Server((req, res) => serve(req as unknown as IncomingMessage, res as unknown as ServerResponse));
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (head: Buffer) => {
      socket.pause();
      socket.unshift(head);
      (head.subarray(0, 3).toString('latin1') === 'PRI' ? h2 : h1).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  return Object.assign(server, {
    closeAll: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}

export async function startFakeBedrock(options: FakeBedrockOptions = {}): Promise<FakeBedrock> {
  const region = options.region ?? 'us-east-1';
  const nowMs = options.nowMs ?? Date.now;
  const identities = new Map<string, FakeAwsIdentity>();
  for (const i of options.identities ?? []) identities.set(i.accessKeyId, i);
  const apiKeys = new Set(options.apiKeys ?? []);
  const queue: FakeBedrockBehavior[] = [];
  const ids = new IdSource();
  const writer = createEventStreamWriter();
  const fake = { requests: [] as FakeBedrockRequest[], refusals: [] as AwsRefusal[], minted: [] as FakeAwsIdentity[] };

  function refuse(res: ServerResponse, r: AwsRefusal): void {
    fake.refusals.push(r);
    sendError(res, r);
  }

  /** Who signed or which key; a refusal is answered here. */
  function authorize(req: IncomingMessage, body: Buffer, res: ServerResponse): string | undefined {
    const authorization = req.headers.authorization ?? '';
    if (authorization.startsWith('Bearer ')) {
      if (apiKeys.has(authorization.slice(7))) return 'api-key';
      refuse(res, { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' });
      return undefined;
    }
    const checked = checkSigV4({ method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers, body }, (id) => identities.get(id), {
      region,
      service: 'bedrock',
      nowMs: nowMs(),
    });
    if (isRefusal(checked)) {
      refuse(res, checked);
      return undefined;
    }
    return checked.accessKeyId;
  }

  function mint(res: ServerResponse): void {
    const identity: FakeAwsIdentity = {
      accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(48).toString('base64'),
      expiresAtMs: nowMs() + (options.credentialLifetimeMs ?? 3_600_000),
    };
    identities.set(identity.accessKeyId, identity);
    fake.minted.push(identity);
    const expiration = new Date(identity.expiresAtMs!).toISOString();
    sendJson(
      res,
      JSON.stringify({
        AccessKeyId: identity.accessKeyId,
        SecretAccessKey: identity.secretAccessKey,
        Token: identity.sessionToken,
        Expiration: expiration,
      }),
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && path === '/credentials') return mint(res);
    const m = /^\/model\/([^/]+)\/([a-z-]+)$/.exec(path);
    if (req.method !== 'POST' || !m || !OPERATIONS.has(m[2]!))
      return sendError(res, { status: 404, type: 'UnknownOperationException', message: 'Unknown operation' });
    const caller = authorize(req, body, res);
    if (caller === undefined) return;
    const operation = m[2] as BedrockOperationName;
    const modelId = decodeURIComponent(m[1]!);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return refuse(res, { status: 400, type: 'ValidationException', message: 'Malformed input request, please reformat your input and try again.' });
    }
    if (!isObject(parsed))
      return refuse(res, { status: 400, type: 'ValidationException', message: 'Malformed input request, please reformat your input and try again.' });
    fake.requests.push({ operation, modelId, rawPath: path, headers: { ...req.headers }, body: parsed, caller });
    const behavior = queue.shift() ?? { kind: 'ok' };
    if (behavior.kind === 'error') return refuse(res, behavior);
    const usage: FakeBedrockUsage = behavior.kind === 'ok' ? behavior : {};
    if (operation === 'converse' || operation === 'converse-stream') {
      const answer = converseAnswer(parsed, usage);
      if (operation === 'converse') return sendJson(res, converseJson(answer));
      return writeStream(res, converseStreamMessages(writer, answer), behavior, writer);
    }
    const refusal = invokeBodyRefusal(modelId, parsed, options.acceptedBetas);
    if (refusal) return refuse(res, refusal);
    const answer = invokeAnswer(modelId, parsed, operation === 'invoke-with-response-stream', ids, usage);
    if ('json' in answer) return sendJson(res, answer.json);
    return writeStream(
      res,
      answer.events.map((e) => chunkMessage(writer, e)),
      behavior,
      writer,
    );
  }

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, { status: 500, type: 'InternalServerException', message: 'The fake failed.' });
      else res.destroy();
    });
  };
  const server = listenBothProtocols(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    credentialsUrl: `${url}/credentials`,
    region,
    ...fake,
    enqueue: (...b) => queue.push(...b),
    addIdentity: (i) => identities.set(i.accessKeyId, i),
    close: () => server.closeAll(),
  };
}
