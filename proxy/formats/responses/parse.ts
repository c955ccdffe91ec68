import type { JsonObject } from '../../../shared/json.js';
import { optionalPositiveInt, type OutputLimits } from '../fields.js';
import { parseResponsesRequest } from './schema.js';

/** A Responses call's checks (a 400 naming the first malformed field) and its output limit, `max_output_tokens`; one choice. */
export function responsesOutputLimits(body: JsonObject): OutputLimits {
  parseResponsesRequest(body);
  return { maxTokens: optionalPositiveInt(body, 'max_output_tokens'), choices: 1 };
}
