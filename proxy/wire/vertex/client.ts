import type { IncomingHttpHeaders } from 'node:http';
import { invalidInput } from '../../../shared/errors.js';
import { isObject, type JsonObject } from '../../../shared/json.js';

/**
 * Vertex AI's paths for Anthropic's models, as Claude Code (with
 * `CLAUDE_CODE_USE_VERTEX`) and `@anthropic-ai/vertex-sdk` call them under a
 * workspace: `vertex/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict`
 * (`:streamRawPredict`), and `…/models/count-tokens:rawPredict`. Project and
 * location are the client's own settings and mean nothing here: the alias's
 * provider decides where the call goes.
 */
const VERTEX_PATH = /^vertex\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^:]+):(rawPredict|streamRawPredict)$/;

/** What a Vertex path asks: a call on the path's model, or a count (whose body names the model). */
export type VertexRoute = { action: 'call'; model: string } | { action: 'count' };

/** The path after the workspace slug → what it asks; undefined when it is not a Vertex path (or its model's escapes are invalid). */
export function vertexRoute(rest: string): VertexRoute | undefined {
  const m = VERTEX_PATH.exec(rest);
  if (!m) return undefined;
  if (m[1] === 'count-tokens' && m[2] === 'rawPredict') return { action: 'count' };
  try {
    // The SDKs escape the alias's `/` (`tg%2Fsonnet`); sent plainly, it still reads as one model.
    return { action: 'call', model: decodeURIComponent(m[1]!) };
  } catch {
    return undefined;
  }
}

/** The Messages API version a Vertex client's call is read as: Vertex's body version stands for it. */
const MESSAGES_VERSION = '2023-06-01';

/** The `anthropic-version` header the Messages rules ask for, set when the client sent none (the vertex SDK sends none; Claude Code sends both). */
export function vertexMessagesHeaders(headers: IncomingHttpHeaders): void {
  headers['anthropic-version'] ??= MESSAGES_VERSION;
}

/**
 * A parsed Vertex call body as the Messages call it stands for, in place:
 * the path's model (`alias`) in `model`, Vertex's `anthropic_version`
 * dropped. The client's bytes are not rewritten: the parse (in a body worker
 * for a large body) reads them once, and a provider's request is made from
 * the parsed body (wire/upstream.ts).
 */
export function messagesOfVertexBody(body: JsonObject, alias: string): JsonObject & { model: string } {
  delete body.anthropic_version;
  body.model = alias;
  return body as JsonObject & { model: string };
}

/** A Vertex count body (`count-tokens:rawPredict` names its model in the body) as a Messages count: `anthropic_version` dropped. */
export function messagesCountFromVertex(raw: Buffer, headers: IncomingHttpHeaders): Buffer {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidInput('The request body is not valid JSON.');
  }
  if (!isObject(body)) throw invalidInput('The request body must be a JSON object.');
  const { anthropic_version: _version, ...rest } = body;
  vertexMessagesHeaders(headers);
  return Buffer.from(JSON.stringify(rest));
}
