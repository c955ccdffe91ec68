import { invalidInput } from '../../shared/errors.js';

/** A field that, when given, must be a positive integer (token limits, `n`). */
export function optionalPositiveInt(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw invalidInput(`${field}: must be a positive integer.`);
  return v;
}

/** Chat Completions and Messages both carry the conversation in `messages`. */
export function requireMessages(body: Record<string, unknown>): void {
  if (!Array.isArray(body.messages)) throw invalidInput('messages: an array of messages is required.');
}

/** What a call may generate: tokens per choice (undefined: the model's maximum), and choices. */
export interface OutputLimits {
  maxTokens: number | undefined;
  choices: number;
}
