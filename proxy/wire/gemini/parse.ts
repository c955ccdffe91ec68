import { invalidInput } from '../../../shared/errors.js';
import { isObject, type JsonObject } from '../../../shared/json.js';
import type { ParsedCall } from '../../call.js';
import type { OutputLimits } from '../fields.js';
import { parseGeminiRequest } from './schema.js';

/**
 * A Gemini call names its model and whether it streams in the path
 * (`/v1beta/models/{model}:generateContent` or `:streamGenerateContent`), not
 * in the body; the body holds the conversation alone.
 */

/** `generationConfig.maxOutputTokens` and `candidateCount` (each candidate may use the limit). */
export function geminiOutputLimits(body: JsonObject): OutputLimits {
  parseGeminiRequest(body);
  const config = isObject(body.generationConfig) ? body.generationConfig : {};
  const maxTokens = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : undefined;
  const choices = typeof config.candidateCount === 'number' ? config.candidateCount : 1;
  return { maxTokens, choices };
}

/**
 * A `countTokens` body: either the conversation's own fields (`contents`,
 * and on newer clients `systemInstruction` and `tools`) or a whole
 * `generateContentRequest`; the request counted is returned in both cases.
 */
export function countedRequest(body: JsonObject): JsonObject {
  if (body.generateContentRequest === undefined) return body;
  if (!isObject(body.generateContentRequest)) throw invalidInput('generateContentRequest: expected an object');
  return body.generateContentRequest;
}

/** The path's pieces: the alias (its `/` may come escaped or not) and the action after the colon. */
export interface GeminiTarget {
  alias: string;
  action: string;
}

/** `…/models/{alias}:{action}` → the alias and action; undefined when the path is no model action. */
export function geminiTarget(rest: string): GeminiTarget | undefined {
  const colon = rest.lastIndexOf(':');
  if (colon <= 0) return undefined;
  let alias: string;
  try {
    alias = decodeURIComponent(rest.slice(0, colon));
  } catch {
    return undefined;
  }
  return alias === '' ? undefined : { alias, action: rest.slice(colon + 1) };
}

/** The body of a Gemini call (a JSON object: wire/parse.ts checked that), as a call of the given alias; `stream` from the action in its path. */
export function parseGeminiCall(body: JsonObject, raw: Buffer, alias: string, stream: boolean, purpose: 'call' | 'count' = 'call'): ParsedCall {
  const request = purpose === 'count' ? countedRequest(body) : body;
  const { maxTokens, choices } = geminiOutputLimits(request);
  return { alias, stream, maxTokens, choices, body: request, raw };
}
