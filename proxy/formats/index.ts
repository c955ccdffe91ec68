import type { IncomingHttpHeaders } from 'node:http';
import { AppError, invalidInput } from '../../shared/errors.js';
import type { AuthHeader, ModelCatalog, ModelConfig, ProviderConfig } from '../../shared/models.js';
import { translatorFrom, upstreamFormat, type AnswerTranslator } from '../translate/index.js';
import type { ParsedCall, WireFormat } from '../call.js';
import { CLOSE_BRACE, CLOSE_BRACKET, COLON, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-bytes.js';
import { isObject } from '../../shared/json.js';

function optionalPositiveInt(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw invalidInput(`${field}: must be a positive integer.`);
  return v;
}

/** Deeper JSON than this is refused: re-serializing it would exhaust the stack, and no real request nests so far. */
export const MAX_JSON_DEPTH = 128;

/** Whether `raw` holds more than `max` bytes `c` (native search: most bodies have a handful of brackets). */
function moreThan(raw: Buffer, c: number, max: number): boolean {
  let n = 0;
  for (let i = raw.indexOf(c); i >= 0; i = raw.indexOf(c, i + 1)) if (++n > max) return true;
  return false;
}

/**
 * Whether valid JSON text nests deeper than `max`, without a second parse.
 * It cannot unless it has more than `max / 2` opening brackets of one kind
 * or the other; only then are the bytes walked (strings skipped).
 */
export function jsonDeeperThan(raw: Buffer, max: number): boolean {
  if (raw.length <= max) return false;
  const half = Math.floor(max / 2);
  if (!moreThan(raw, OPEN_BRACE, half) && !moreThan(raw, OPEN_BRACKET, half)) return false;
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === QUOTE) i = stringEnd(raw, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** `count` is a Messages count_tokens call: the same body as a model call, but no output limit is needed. */
export function parseCall(format: WireFormat, raw: Buffer, headers: IncomingHttpHeaders, purpose: 'call' | 'count' = 'call'): ParsedCall {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidInput('The request body is not valid JSON.');
  }
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) throw invalidInput(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  if (!isObject(body)) throw invalidInput('The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') throw invalidInput('model: a model alias is required.');
  if (!Array.isArray(body.messages)) throw invalidInput('messages: an array of messages is required.');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw invalidInput('stream: must be a boolean.');
  }
  let maxTokens: number | undefined;
  if (format === 'messages') {
    if (!headers['anthropic-version']) throw invalidInput('The anthropic-version header is required.');
    maxTokens = optionalPositiveInt(body, 'max_tokens');
    if (maxTokens === undefined && purpose === 'call') throw invalidInput('max_tokens: required on the Messages format.');
  } else {
    // With both given, hold for the larger: the worst case is what is held.
    const limits = [optionalPositiveInt(body, 'max_completion_tokens'), optionalPositiveInt(body, 'max_tokens')].filter((v) => v !== undefined);
    maxTokens = limits.length ? Math.max(...limits) : undefined;
  }
  const choices = format === 'chat' ? (optionalPositiveInt(body, 'n') ?? 1) : 1;
  if (choices > 128) throw invalidInput('n: at most 128 choices.');
  return { alias: body.model, stream: body.stream === true, maxTokens, choices, body, raw };
}

/** The output ceiling the hold assumes: what the client allowed (per choice), else the model's own maximum. */
export function outputCeiling(call: ParsedCall, model: ModelConfig): number {
  return Math.min(call.maxTokens ?? model.max_output_tokens, model.max_output_tokens) * call.choices;
}

export interface UpstreamCall {
  origin: string;
  /** Path and query on the provider. */
  path: string;
  body: Buffer;
  authHeader: AuthHeader;
  /** The proxy asked for a usage chunk the client did not: drop it on the way back. */
  dropUsageChunk: boolean;
  /** The format the provider is called in; the usage tap reads the answer in this format. */
  format: WireFormat;
  /** Set when the provider lacks the client's format: turns the provider's answer into the client's. */
  translate: AnswerTranslator | undefined;
  /** Headers added to the call: the provider entry's own, and what a translated call needs. */
  extraHeaders: Record<string, string> | undefined;
}

const MODEL_KEY = Buffer.from('"model"');

/** A model's alias and upstream name as JSON text bytes, made once per model rather than per call. */
const modelNames = new WeakMap<ModelConfig, { alias: Buffer; upstream: Buffer }>();

function namesOf(model: ModelConfig): { alias: Buffer; upstream: Buffer } {
  let names = modelNames.get(model);
  if (!names) {
    names = { alias: Buffer.from(JSON.stringify(model.alias)), upstream: Buffer.from(JSON.stringify(model.upstream_model)) };
    modelNames.set(model, names);
  }
  return names;
}

/**
 * The client's bytes with only the model's value replaced, or undefined when
 * that cannot be done for certain. Re-serializing a parsed body costs a few
 * microseconds per call; a splice costs a byte search. It is done only when
 * `"model"` occurs exactly once in the text (so it is the top-level key the
 * parse found: inside a string its quotes would be escaped) and is followed
 * by the model's alias written plainly (the parse found that alias there).
 */
function withModelReplaced(raw: Buffer, model: ModelConfig): Buffer | undefined {
  const at = raw.indexOf(MODEL_KEY);
  if (at < 0 || raw.indexOf(MODEL_KEY, at + MODEL_KEY.length) >= 0) return undefined;
  let i = at + MODEL_KEY.length;
  while (isJsonSpace(raw[i])) i++;
  if (raw[i] !== COLON) return undefined;
  i++;
  while (isJsonSpace(raw[i])) i++;
  const { alias, upstream } = namesOf(model);
  if (raw.compare(alias, 0, alias.length, i, i + alias.length) !== 0) return undefined;
  return Buffer.concat([raw.subarray(0, i), upstream, raw.subarray(i + alias.length)]);
}

const endpoints = new Map<string, { origin: string; path: string }>();

/** The provider URL of a format, parsed once per base URL rather than per call. */
function endpoint(base: string, format: WireFormat): { origin: string; path: string } {
  const cacheKey = `${format} ${base}`;
  let e = endpoints.get(cacheKey);
  if (!e) {
    const url = new URL(`${base.replace(/\/+$/, '')}${format === 'chat' ? '/chat/completions' : '/v1/messages'}`);
    e = { origin: url.origin, path: url.pathname };
    endpoints.set(cacheKey, e);
  }
  return e;
}

function jsonBytes(json: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(json));
}

/** The Messages API refuses calls without a version; a translated Chat Completions client never sends one. */
const MESSAGES_VERSION = '2023-06-01';

/**
 * Alias → upstream model, in the provider's format: unchanged but for the
 * model (and, for a streamed Chat Completions call, a request for the usage
 * chunk) when the provider speaks the client's format; translated otherwise.
 */
export function upstreamCall(format: WireFormat, call: ParsedCall, model: ModelConfig, provider: ProviderConfig, search: string): UpstreamCall {
  const target = upstreamFormat(provider, format);
  let body: Buffer;
  let dropUsageChunk = false;
  let translate: AnswerTranslator | undefined;
  let extraHeaders = provider.extra_headers;
  if (target === format) {
    // Only a streamed Chat Completions call can lack the usage chunk it is billed by.
    const options = format === 'chat' && call.stream ? (isObject(call.body.stream_options) ? call.body.stream_options : {}) : undefined;
    if (options && options.include_usage !== true) {
      dropUsageChunk = true;
      body = jsonBytes({ ...call.body, model: model.upstream_model, stream_options: { ...options, include_usage: true } });
    } else {
      // The parsed body is copied and serialized only when the client's bytes cannot be kept.
      body = withModelReplaced(call.raw, model) ?? jsonBytes({ ...call.body, model: model.upstream_model });
    }
  } else {
    const translator = translatorFrom(format);
    body = jsonBytes(translator.request(call, model));
    translate = translator.answer(call);
    // The client's query string belongs to its own format's API.
    search = '';
    if (target === 'messages') extraHeaders = { 'anthropic-version': MESSAGES_VERSION, ...extraHeaders };
  }
  const url = endpoint((target === 'chat' ? provider.chat_completions_base_url : provider.messages_base_url)!, target);
  const authHeader = target === 'chat' ? (provider.chat_completions_auth_header ?? 'authorization') : (provider.messages_auth_header ?? 'x-api-key');
  return {
    origin: url.origin,
    path: `${url.path}${search}`,
    body,
    authHeader,
    dropUsageChunk,
    format: target,
    translate,
    extraHeaders,
  };
}

/**
 * A count_tokens call to a provider that speaks Messages: the same body with
 * the alias replaced, to its `/v1/messages/count_tokens`. Undefined when the
 * provider speaks only Chat Completions (the proxy then counts locally).
 */
export function countTokensCall(
  call: ParsedCall,
  model: ModelConfig,
  provider: ProviderConfig,
): Omit<UpstreamCall, 'dropUsageChunk' | 'translate'> | undefined {
  if (provider.messages_base_url === undefined) return undefined;
  const url = endpoint(provider.messages_base_url, 'messages');
  return {
    origin: url.origin,
    path: `${url.path}/count_tokens`,
    body: Buffer.from(JSON.stringify({ ...call.body, model: model.upstream_model })),
    authHeader: provider.messages_auth_header ?? 'x-api-key',
    format: 'messages',
    extraHeaders: provider.extra_headers,
  };
}

/** `GET …/models` in each provider's list shape. */
export function modelList(format: WireFormat, aliases: string[], catalog: ModelCatalog): string {
  if (format === 'messages') {
    const data = aliases.map((id) => ({ type: 'model', id, display_name: id, created_at: '1970-01-01T00:00:00Z' }));
    return JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
  }
  return JSON.stringify({
    object: 'list',
    data: aliases.map((id) => ({ id, object: 'model', created: 0, owned_by: catalog.models.get(id)?.provider ?? 'tollgate' })),
  });
}

export function tooLarge(limit: number): AppError {
  return new AppError('too_large', `The request body is larger than ${limit} bytes.`);
}
