import type { IncomingHttpHeaders } from 'node:http';
import { invalidInput } from '../../../shared/errors.js';
import type { JsonObject } from '../../../shared/json.js';
import { optionalPositiveInt, requireMessages, type OutputLimits } from '../fields.js';

/** A Messages call's output limits: `max_tokens`, required on a model call (not on count_tokens); one choice. */
export function messagesOutputLimits(body: JsonObject, headers: IncomingHttpHeaders, purpose: 'call' | 'count'): OutputLimits {
  requireMessages(body);
  if (!headers['anthropic-version']) throw invalidInput('The anthropic-version header is required.');
  const maxTokens = optionalPositiveInt(body, 'max_tokens');
  if (maxTokens === undefined && purpose === 'call') throw invalidInput('max_tokens: required on the Messages format.');
  return { maxTokens, choices: 1 };
}
