import { AppError } from '../../../shared/errors.js';
import { estimateInputTokens } from '../../money/cost.js';
import { refersToInput } from '../../money/referenced-input.js';
import { rateLimitHeaders, type LimitOutcome } from '../../rate-limits.js';
import type { CallState, EdgeDeps, Modelled, StepOutcome } from './step.js';
import { DEFAULT_MAX_INPUT_TOKENS } from '../../../shared/models.js';

function admitted(s: CallState, limit: LimitOutcome): StepOutcome {
  const limitHeaders = rateLimitHeaders(limit);
  // Every answer from here on carries the request id with the limit headers.
  limitHeaders['x-request-id'] = s.requestId;
  s.limitHeaders = limitHeaders;
  if (limit.ok) return undefined;
  s.detail = limit.which;
  const retryAfter = String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000)));
  return new AppError('rate_limited', `Rate limit reached for ${limit.which} per minute on this key. Retry after ${retryAfter}s.`, {
    headers: { ...limitHeaders, 'retry-after': retryAfter },
  });
}

/** Step `limits` (429): the key's requests and tokens per minute. In process they answer at once; only Redis-backed limits are awaited. */
export function takeLimits(s: Modelled, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  const key = s.key;
  const call = s.call;
  s.inputEstimate = estimateInputTokens(call.raw.length);
  if (s.route.action !== 'embed' && refersToInput(call)) {
    if (!deps.config.proxy.referencedInput) {
      return new AppError(
        'invalid_input',
        'This gateway does not accept input the request refers to without carrying it (previous_response_id, conversation, stored prompts, file ids, file or image URLs). Send the input in the request.',
      );
    }
    // What the provider will bill is unknown: the hold (and the tokens per minute) assume the model's whole context window.
    s.inputEstimate = Math.max(s.inputEstimate, s.model.max_input_tokens ?? DEFAULT_MAX_INPUT_TOKENS);
  }
  const limit = deps.limits.admit(key.id, key.rpm, key.tpm, s.inputEstimate);
  return limit instanceof Promise ? limit.then((l) => admitted(s, l)) : admitted(s, limit);
}
