import type { JsonObject } from '../../../shared/json.js';
import { invalidInput } from '../../../shared/errors.js';
import { optionalPositiveInt, type OutputLimits } from '../fields.js';
import { parseResponsesRequest } from './schema.js';

/** A Responses call's checks (a 400 naming the first malformed field) and its output limit, `max_output_tokens`; one choice. */
export function responsesOutputLimits(body: JsonObject): OutputLimits {
  parseResponsesRequest(body);
  // As `messages` on the other formats: a call with nothing to answer is malformed, unless an earlier
  // response, a stored prompt or a conversation supplies the input (those are the provider's to resolve).
  if (body.input === undefined && body.previous_response_id == null && body.prompt == null && body.conversation == null) {
    throw invalidInput('input: required; send the conversation as a string or a list of items.');
  }
  return { maxTokens: optionalPositiveInt(body, 'max_output_tokens'), choices: 1 };
}
