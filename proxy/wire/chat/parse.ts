import { invalidInput } from '../../../shared/errors.js';
import type { JsonObject } from '../../../shared/json.js';
import { optionalPositiveInt, requireMessages, type OutputLimits } from '../fields.js';

/** A Chat Completions call's output limits: the larger of its two token limits, and `n` choices. */
export function chatOutputLimits(body: JsonObject): OutputLimits {
  requireMessages(body);
  // With both given, hold for the larger: the worst case is what is held.
  const limits = [optionalPositiveInt(body, 'max_completion_tokens'), optionalPositiveInt(body, 'max_tokens')].filter((v) => v !== undefined);
  const maxTokens = limits.length ? Math.max(...limits) : undefined;
  const choices = optionalPositiveInt(body, 'n') ?? 1;
  if (choices > 128) throw invalidInput('n: at most 128 choices.');
  return { maxTokens, choices };
}
