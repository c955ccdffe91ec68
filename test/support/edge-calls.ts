import type { WireFormat } from '../../proxy/call.js';
import { upstreamFormat } from '../../proxy/translate/index.js';
import { WIRE_FORMATS } from '../../shared/wire-formats.js';
import { testConfig } from './control-plane.js';

/** Every wire format, from the one list: a suite that loops over it takes in a new format without being edited. */
export const FORMATS: readonly WireFormat[] = WIRE_FORMATS;

/** Each format as its clients call it, plus a streamed Responses call (Codex and the Agents SDK stream by default). */
export interface EdgeVariant {
  format: WireFormat;
  stream: boolean;
  name: string;
}

export interface EdgeAnswer {
  status: number;
  headers: Headers;
  text: string;
  // Tests read every provider's JSON shapes; typing each would restate the wire in every test.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The body exactly as it was sent (a Gemini call's model and streaming went into its path instead). */
  sent: string;
}

type Body = EdgeAnswer['body'];
type Json = Record<string, unknown>;
type KeyHeader = 'authorization' | 'x-api-key' | 'x-goog-api-key';

/**
 * How one format's clients call the proxy and read its answers, written out
 * here rather than read from the proxy's registry, so a route or shape the
 * proxy gets wrong fails a test instead of agreeing with it. A Record, so a
 * new format does not compile until its clients are described.
 */
interface ClientShape {
  name: string;
  /** The call's path after `/{slug}`. */
  path(model: string, stream: boolean): string;
  /** The path names the model and whether the call streams (Google's), so the body does not. */
  modelInPath: boolean;
  /** The header its SDK sends the key in, and another the proxy also takes for this format. */
  keyHeader: KeyHeader;
  otherKeyHeader: KeyHeader;
  /** What its SDK sends beside the key on every call. */
  headers: Readonly<Record<string, string>>;
  /** A body in this format's fields from one in Chat's (`messages`, `max_tokens`); other fields pass unchanged. */
  body(chat: Json): Json;
  errorType(body: Body): string | undefined;
  /** The error's code string; undefined for a format whose errors carry none (Anthropic's; Google's `code` is the HTTP status). */
  errorCode: ((body: Body) => unknown) | undefined;
  /** The model's text in a whole answer, and in one event of a stream. */
  text(body: Body): string;
  eventText(event: Json): string;
  /** Its model list: the path after `/{slug}`, and the ids the list names (undefined when it is not in this format's shape). */
  modelsPath: string;
  modelIds(body: Body): string[] | undefined;
}

const openAiError = {
  errorType: (body: Body) => body?.error?.type,
  errorCode: (body: Body) => body?.error?.code,
};

const openAiList = (body: Body) => (body?.object === 'list' ? (body.data as { id: string }[]).map((m) => m.id) : undefined);

/** Chat's `messages` as Google's `contents` (the assistant is `model`) and `systemInstruction`; `max_tokens` in `generationConfig`. */
function geminiBody(chat: Json): Json {
  const { messages, max_tokens, ...body } = chat;
  if (Array.isArray(messages)) {
    const turns = messages as { role: string; content: string }[];
    const text = (m: { content: string }) => ({ text: m.content });
    body.contents = turns.filter((m) => m.role !== 'system').map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [text(m)] }));
    const system = turns.filter((m) => m.role === 'system').map(text);
    if (system.length) body.systemInstruction = { parts: system };
  }
  if (max_tokens !== undefined) body.generationConfig = { maxOutputTokens: max_tokens };
  return body;
}

const CLIENTS: Record<WireFormat, ClientShape> = {
  chat: {
    name: 'Chat Completions',
    path: () => '/v1/chat/completions',
    modelInPath: false,
    keyHeader: 'authorization',
    otherKeyHeader: 'x-api-key',
    headers: {},
    body: (chat) => chat,
    ...openAiError,
    text: (body) => body.choices[0].message.content,
    eventText: (e) => (e as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '',
    modelsPath: '/v1/models',
    modelIds: openAiList,
  },
  messages: {
    name: 'Messages',
    path: () => '/anthropic/v1/messages',
    modelInPath: false,
    keyHeader: 'x-api-key',
    otherKeyHeader: 'authorization',
    headers: { 'anthropic-version': '2023-06-01' },
    body: (chat) => ({ model: chat.model, messages: chat.messages, max_tokens: 64, ...chat }),
    errorType: (body) => (body?.type === 'error' ? body.error?.type : undefined),
    errorCode: undefined,
    text: (body) => body.content[0].text,
    eventText: (e) => (e as { delta?: { text?: string } }).delta?.text ?? '',
    modelsPath: '/anthropic/v1/models',
    modelIds: (body) =>
      Array.isArray(body?.data) && body.data.every((m: { type?: string }) => m.type === 'model')
        ? (body.data as { id: string }[]).map((m) => m.id)
        : undefined,
  },
  responses: {
    name: 'Responses',
    path: () => '/v1/responses',
    modelInPath: false,
    keyHeader: 'authorization',
    otherKeyHeader: 'x-api-key',
    headers: {},
    body: ({ messages, max_tokens, ...rest }) => ({
      ...rest,
      input: messages,
      ...(max_tokens === undefined ? {} : { max_output_tokens: max_tokens }),
    }),
    ...openAiError,
    text: (body) => {
      const message = (body.output as { type: string; content?: { type: string; text: string }[] }[]).find((i) => i.type === 'message');
      return message?.content?.find((p) => p.type === 'output_text')?.text ?? '';
    },
    eventText: (e) => (e.type === 'response.output_text.delta' ? String(e.delta) : ''),
    modelsPath: '/v1/models',
    modelIds: openAiList,
  },
  gemini: {
    name: 'Gemini',
    path: (model, stream) => `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    modelInPath: true,
    keyHeader: 'x-goog-api-key',
    otherKeyHeader: 'authorization',
    headers: {},
    body: geminiBody,
    errorType: (body) => body?.error?.status,
    errorCode: undefined,
    text: (body) => geminiText(body),
    eventText: (e) => geminiText(e),
    modelsPath: '/v1beta/models',
    modelIds: (body) => (Array.isArray(body?.models) ? (body.models as { name: string }[]).map((m) => m.name.replace(/^models\//, '')) : undefined),
  },
};

/** A Gemini answer's (or stream chunk's) text, its thoughts left out. */
function geminiText(body: Body): string {
  const parts = (body?.candidates?.[0]?.content?.parts ?? []) as { text?: string; thought?: boolean }[];
  return parts.map((p) => (p.thought ? '' : (p.text ?? ''))).join('');
}

export const VARIANTS: EdgeVariant[] = [
  ...FORMATS.map((format) => ({ format, stream: false, name: CLIENTS[format].name })),
  { format: 'responses', stream: true, name: 'Responses, streamed' },
];

/** Each refusal's error type (`error.type`; Google's `error.status`) per status, per wire format. */
export const ERROR_TYPES = {
  401: { chat: 'invalid_request_error', messages: 'authentication_error', responses: 'invalid_request_error', gemini: 'UNAUTHENTICATED' },
  400: { chat: 'invalid_request_error', messages: 'invalid_request_error', responses: 'invalid_request_error', gemini: 'INVALID_ARGUMENT' },
  404: { chat: 'invalid_request_error', messages: 'not_found_error', responses: 'invalid_request_error', gemini: 'NOT_FOUND' },
  403: { chat: 'permission_error', messages: 'permission_error', responses: 'permission_error', gemini: 'PERMISSION_DENIED' },
  402: { chat: 'insufficient_quota', messages: 'billing_error', responses: 'insufficient_quota', gemini: 'FAILED_PRECONDITION' },
  429: { chat: 'rate_limit_error', messages: 'rate_limit_error', responses: 'rate_limit_error', gemini: 'RESOURCE_EXHAUSTED' },
  413: { chat: 'invalid_request_error', messages: 'request_too_large', responses: 'invalid_request_error', gemini: 'INVALID_ARGUMENT' },
  500: { chat: 'api_error', messages: 'api_error', responses: 'api_error', gemini: 'INTERNAL' },
  502: { chat: 'api_error', messages: 'api_error', responses: 'api_error', gemini: 'UNAVAILABLE' },
  503: { chat: 'api_error', messages: 'overloaded_error', responses: 'api_error', gemini: 'UNAVAILABLE' },
  504: { chat: 'api_error', messages: 'api_error', responses: 'api_error', gemini: 'DEADLINE_EXCEEDED' },
} as const satisfies Record<number, Record<WireFormat, string>>;

/** The path of a model call after the proxy's origin; `model` and `stream` matter only to a format that puts them in its path. */
export function edgePath(format: WireFormat, slug: string, model = 'tg/sonnet', stream = false): string {
  return `/${slug}${CLIENTS[format].path(model, stream)}`;
}

/** The path of the format's model list after the proxy's origin. */
export function modelsPath(format: WireFormat, slug: string): string {
  return `/${slug}${CLIENTS[format].modelsPath}`;
}

/**
 * A minimal valid body of each format. `extra` is written in Chat's field
 * names so one test reads the same on every format (on Responses `messages`
 * becomes `input`, on Gemini `contents`). Gemini names the model and the
 * streaming in its path: its body here keeps them as `model` and `stream`,
 * and `edgeRequest` moves them there.
 */
export function modelBody(format: WireFormat, extra: Json = {}): Json {
  return CLIENTS[format].body({ model: 'tg/sonnet', messages: [{ role: 'user', content: 'Say hello to the proxy.' }], ...extra });
}

/** The headers the format's SDK sends with `key` in `header` (its own unless named). */
export function keyHeaders(format: WireFormat, key: string | undefined, header: KeyHeader = CLIENTS[format].keyHeader): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...CLIENTS[format].headers };
  if (key !== undefined) headers[header] = header === 'authorization' ? `Bearer ${key}` : key;
  return headers;
}

/** Another header than its own that the format takes a key in. */
export function otherKeyHeader(format: WireFormat): KeyHeader {
  return CLIENTS[format].otherKeyHeader;
}

export interface EdgeOptions {
  /** Added to the format's own; an empty value removes a header. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  keyHeader?: KeyHeader;
}

/**
 * One model call as its format's clients send it: the URL, the key header
 * and version header, the JSON body. A Gemini body's `model` and `stream`
 * become its path; a body given as text is sent as it is (a Gemini call of
 * tg/sonnet, unstreamed).
 */
export function edgeRequest(
  proxyUrl: string,
  format: WireFormat,
  slug: string,
  key: string | undefined,
  body: unknown,
  options: EdgeOptions = {},
): { url: string; init: RequestInit & { headers: Record<string, string>; body: string } } {
  const headers = { ...keyHeaders(format, key, options.keyHeader), ...options.headers };
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  let path = edgePath(format, slug);
  let sent = typeof body === 'string' ? body : JSON.stringify(body);
  if (CLIENTS[format].modelInPath && typeof body === 'object' && body !== null) {
    const { model, stream, ...rest } = body as Json;
    path = edgePath(format, slug, typeof model === 'string' ? model : 'tg/sonnet', stream === true);
    sent = JSON.stringify(rest);
  }
  return { url: `${proxyUrl}${path}`, init: { method: 'POST', headers, body: sent, signal: options.signal } };
}

/** One model call the way that format's clients send it, its whole answer read. */
export async function edgeCall(
  proxyUrl: string,
  format: WireFormat,
  slug: string,
  key: string | undefined,
  body: unknown,
  options: EdgeOptions = {},
): Promise<EdgeAnswer> {
  const { url, init } = edgeRequest(proxyUrl, format, slug, key, body, options);
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed, sent: init.body };
}

/** The error type of an answer, whichever wire format it is in. */
export function errorType(format: WireFormat, answer: Pick<EdgeAnswer, 'body'>): string | undefined {
  return CLIENTS[format].errorType(answer.body);
}

/** The error's code string, or undefined for a format whose errors carry none. */
export function errorCodeOf(format: WireFormat): ((answer: Pick<EdgeAnswer, 'body'>) => unknown) | undefined {
  const code = CLIENTS[format].errorCode;
  return code && ((answer) => code(answer.body));
}

/** The ids a model list answer names, or undefined when it is not in the format's list shape. */
export function listedModels(format: WireFormat, body: Body): string[] | undefined {
  return CLIENTS[format].modelIds(body);
}

/** The data of each SSE event of a streamed answer, parsed. */
export function sseData(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.trim() !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

/** The model's text in a 200 answer, whichever format it is in, streamed or not. */
export function answerText(format: WireFormat, answer: EdgeAnswer): string {
  const client = CLIENTS[format];
  if (answer.body === undefined)
    return sseData(answer.text)
      .map((e) => client.eventText(e))
      .join('');
  return client.text(answer.body);
}

/**
 * The format a call on `alias` (the test models file) reaches its provider
 * in: the client's own when the provider speaks it, else the one the proxy
 * translates to. What the provider is sent (its auth header, its required
 * headers) follows from it.
 */
export function servedAs(format: WireFormat, alias = 'tg/sonnet'): WireFormat {
  const { models, providers } = testConfig().models;
  return upstreamFormat(providers.get(models.get(alias)!.provider)!, format);
}
