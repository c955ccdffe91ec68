import { toVertexCall } from './vertex/provider.js';
import { vertexProviderFor } from './vertex/publisher.js';
import { providerForModel } from './bedrock/converse-model.js';
import type { AuthHeader, ModelConfig, ProviderConfig } from '../../shared/models.js';
import type { ParsedCall, WireFormat } from '../call.js';
import { baseUrlOf, translateCall, upstreamFormat, type AnswerTranslator } from '../translate/index.js';
import { safeDroppedName } from '../dropped.js';
import { COLON, isJsonSpace } from './json-bytes.js';
import { WIRE } from './registry.js';

export interface UpstreamCall {
  origin: string;
  /** Path and query on the provider: the query is the provider base URL's own, never the client's. */
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
  /** What the translation dropped (well-formed, but the provider cannot honour it): `x-tollgate-dropped`, the log, a metric. */
  dropped: readonly string[];
}

const NONE: readonly string[] = [];

/** The header a provider's key goes in for `format`: the endpoint's own, else the format's default. */
function authHeaderOf(provider: ProviderConfig, format: WireFormat): AuthHeader {
  return provider.endpoints[format]?.auth_header ?? WIRE[format].provider.authHeader;
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

/**
 * A provider endpoint: `path` is the base URL's path with the API's own after
 * it, `query` the base URL's query string (or ''), `target` the two together
 * (what the request line carries).
 */
interface Endpoint {
  origin: string;
  path: string;
  query: string;
  target: string;
}

/** By suffix, then base URL: both strings the catalog already holds, so no key is joined (and hashed) per call. */
const endpoints = new Map<string, Map<string, Endpoint>>();

/**
 * `suffix` under a provider's base URL, parsed once per base URL rather than
 * per call. The base URL's own query string (Azure's older `?api-version=`)
 * stays on every request, after the path; the client's never reaches the
 * provider (docs/security.md).
 */
export function providerEndpoint(base: string, suffix: string): Endpoint {
  let bySuffix = endpoints.get(suffix);
  if (!bySuffix) endpoints.set(suffix, (bySuffix = new Map<string, Endpoint>()));
  let e = bySuffix.get(base);
  if (!e) {
    const url = new URL(base);
    const path = `${url.pathname.replace(/\/+$/, '')}${suffix}`;
    e = { origin: url.origin, path, query: url.search, target: `${path}${url.search}` };
    bySuffix.set(base, e);
  }
  return e;
}

function jsonBytes(json: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(json));
}

/**
 * A translated call's headers: what the provider's format requires of every
 * call, then the provider's own. One object per provider entry and format,
 * so the provider's fixed request headers (headers.ts) are found again
 * instead of rebuilt per call.
 */
const translatedHeaders = new WeakMap<ProviderConfig, Partial<Record<WireFormat, Record<string, string> | undefined>>>();

function headersForTranslated(provider: ProviderConfig, format: WireFormat): Record<string, string> | undefined {
  const required = WIRE[format].requiredProviderHeaders;
  let byFormat = translatedHeaders.get(provider);
  if (!byFormat) translatedHeaders.set(provider, (byFormat = {}));
  if (!(format in byFormat))
    byFormat[format] = Object.keys(required).length === 0 ? provider.extra_headers : { ...required, ...provider.extra_headers };
  return byFormat[format];
}

/**
 * Where a call (or count) goes under a provider's base URL: the format's
 * fixed path, or, for a format whose paths name the model (Gemini's), the
 * path made from the upstream model, with the query a stream asks with after
 * the base URL's own.
 */
function endpointOf(base: string, format: WireFormat, model: ModelConfig, stream: boolean, action: 'call' | 'count', fixed: string): Endpoint {
  const inPath = WIRE[format].modelInPath;
  if (!inPath) return providerEndpoint(base, fixed);
  const { path, query } = inPath.providerPath(model.upstream_model, action, stream);
  const e = providerEndpoint(base, path);
  return query ? { ...e, target: `${e.target}${e.query ? '&' : '?'}${query}` } : e;
}

/**
 * Alias → upstream model, in the provider's format: unchanged but for the
 * model (and, for a streamed Chat Completions call, a request for the usage
 * chunk) when the provider speaks the client's format; translated otherwise.
 */
export function upstreamCall(format: WireFormat, call: ParsedCall, model: ModelConfig, entry: ProviderConfig): UpstreamCall {
  const provider = vertexProviderFor(providerForModel(entry, model), model);
  const target = upstreamFormat(provider, format);
  let body: Buffer;
  let dropUsageChunk = false;
  let translate: AnswerTranslator | undefined;
  let extraHeaders = provider.extra_headers;
  let dropped = NONE;
  if (target === format) {
    // A streamed call may lack the usage frame it is billed by (Chat Completions without include_usage).
    const asking = call.stream ? WIRE[format].withStreamUsage(call.body) : undefined;
    if (asking) {
      dropUsageChunk = true;
      body = jsonBytes({ ...asking, model: model.upstream_model });
    } else {
      // The parsed body is copied and serialized only when the client's bytes cannot be kept; a path naming the model keeps them all.
      body = WIRE[format].modelInPath ? call.raw : (withModelReplaced(call.raw, model) ?? jsonBytes({ ...call.body, model: model.upstream_model }));
    }
  } else {
    const translated = translateCall(format, target, call, model);
    body = jsonBytes(translated.request);
    translate = translated.answer;
    dropped = translated.dropped.map(safeDroppedName);
    extraHeaders = headersForTranslated(provider, target);
  }
  const url = endpointOf(baseUrlOf(provider, target)!, target, model, call.stream, 'call', WIRE[target].provider.callPath);
  const up: UpstreamCall = {
    origin: url.origin,
    path: url.target,
    body,
    authHeader: authHeaderOf(provider, target),
    dropUsageChunk,
    format: target,
    translate,
    extraHeaders,
    dropped,
  };
  if (provider.vertex === undefined) return up;
  return toVertexCall(up, () => JSON.parse(body.toString('utf8')) as Record<string, unknown>, model, provider, 'call', call.stream);
}

/**
 * A token-counting call (Messages `count_tokens`, Responses `input_tokens`)
 * to a provider that speaks the client's format: the same body with the
 * alias replaced. Undefined when the provider does not (the proxy then
 * estimates locally).
 */
export function countTokensCall(
  format: WireFormat,
  call: ParsedCall,
  model: ModelConfig,
  entry: ProviderConfig,
): Omit<UpstreamCall, 'dropUsageChunk' | 'translate' | 'dropped'> | undefined {
  const provider = vertexProviderFor(providerForModel(entry, model), model);
  const base = baseUrlOf(provider, format);
  const countPath = WIRE[format].provider.countPath;
  if (base === undefined || countPath === undefined) return undefined;
  const url = endpointOf(base, format, model, false, 'count', countPath);
  const request = { ...call.body, model: model.upstream_model };
  const up = {
    origin: url.origin,
    path: url.target,
    body: WIRE[format].modelInPath ? call.raw : Buffer.from(JSON.stringify(request)),
    authHeader: authHeaderOf(provider, format),
    format,
    extraHeaders: provider.extra_headers,
  };
  return provider.vertex === undefined ? up : toVertexCall(up, () => request, model, provider, 'count', false);
}
