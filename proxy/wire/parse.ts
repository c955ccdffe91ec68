import type { IncomingHttpHeaders } from 'node:http';
import { AppError, invalidInput } from '../../shared/errors.js';
import { isObject, type JsonObject } from '../../shared/json.js';
import type { ModelConfig } from '../../shared/models.js';
import type { ParsedCall, WireFormat } from '../call.js';
import { CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-bytes.js';
import { WIRE } from './registry.js';
import { messagesOfVertexBody } from './vertex/client.js';

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

/** A request body that is a JSON object, not too deep: what every model endpoint asks first. */
function parseBodyObject(raw: Buffer): JsonObject {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidInput('The request body is not valid JSON.');
  }
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) throw invalidInput(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  if (!isObject(body)) throw invalidInput('The request body must be a JSON object.');
  return body;
}

/**
 * A request body that is a JSON object (not too deep) naming a model. With
 * `pathAlias` (a path that names the model: Vertex's rawPredict, Bedrock's),
 * the path's model is the call's whatever the body says, as on Vertex itself,
 * and the body is read as the Messages call it stands for.
 */
export function parseModelBody(raw: Buffer, pathAlias?: string): JsonObject & { model: string } {
  const body = parseBodyObject(raw);
  if (pathAlias !== undefined) return messagesOfVertexBody(body, pathAlias);
  if (typeof body.model !== 'string' || body.model === '') throw invalidInput('model: a model alias is required.');
  return body as JsonObject & { model: string };
}

/** What the path said of a call whose path names the model (Gemini's, Bedrock's and Vertex's routes): the alias, and whether it streams. */
export interface CallTarget {
  alias: string;
  stream: boolean;
}

/**
 * `count` is a token-counting call (Messages count_tokens, Responses input_tokens): the same body as a model call,
 * but no output limit is needed. `target`: what the path said, for a format whose path names the model.
 */
export function parseCall(
  format: WireFormat,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  purpose: 'call' | 'count' = 'call',
  target?: CallTarget,
): ParsedCall {
  const inPath = WIRE[format].modelInPath;
  if (inPath) {
    if (!target) throw invalidInput('The path must name the model.');
    return inPath.parse(parseBodyObject(raw), raw, target.alias, target.stream, purpose);
  }
  const body = parseModelBody(raw, target?.alias);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw invalidInput('stream: must be a boolean.');
  }
  const { maxTokens, choices } = WIRE[format].outputLimits(body, headers, purpose);
  return { alias: body.model, stream: body.stream === true, maxTokens, choices, body, raw };
}

/** The output ceiling the hold assumes: what the client allowed (per choice), else the model's own maximum. */
export function outputCeiling(call: ParsedCall, model: ModelConfig): number {
  return Math.min(call.maxTokens ?? model.max_output_tokens, model.max_output_tokens) * call.choices;
}

/** The body is over the proxy's limit (413). */
export function tooLarge(limit: number): AppError {
  return new AppError('too_large', `The request body is larger than ${limit} bytes.`);
}
