import type { Usage } from '../call.js';
import type { JsonObject } from '../../shared/json.js';

/** A token count as reported: anything but a positive finite number counts as none. */
export function tokens(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/**
 * Whether a usage object names a count that is not a non-negative integer
 * (negative, a string, null, a fraction…). Such a report cannot be billed as
 * given: the format's reader, the one that knows which counts a bill rests
 * on, answers it as no report, so the call bills its hold rather than nothing
 * (security round two, finding 5). A count left out is not malformed.
 */
export function malformedCounts(u: JsonObject, keys: readonly string[]): boolean {
  for (const k of keys) {
    const v = u[k];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) return true;
  }
  return false;
}

/** One stream's usage, read event by event as the provider's SSE events arrive. */
export interface StreamUsage {
  /** One SSE event's data and name (Chat Completions names none). */
  event(data: string, name: string | undefined): void;
  /** The final usage, once the event that closes the answer carried it. */
  usage(): Usage | undefined;
  /**
   * What the provider had reported so far (Messages says the prompt's split
   * in `message_start`), output not counted: a stream cut short is billed
   * this plus the output seen.
   */
  reportedSoFar(): Usage | undefined;
  outputSeen(): number;
  finishReasons(): string[];
}

/** How a wire format reports the tokens an answer used: one per format (wire/<format>/usage.ts, behind wire/registry.ts). */
export interface UsageReader {
  /** The whole answer's top-level key holding its usage, when not `usage` (Gemini's `usageMetadata`). */
  answerKey?: string;
  /**
   * A whole answer's top-level `usage` object → the usage it reports. `answer`
   * parses the whole answer, for a format that counts things outside `usage`
   * (Responses: its `web_search_call` items); `bytes` lets it look first.
   * Undefined when the counts are malformed (`malformedCounts`).
   */
  fromAnswer(u: JsonObject, bytes: Buffer, answer: () => JsonObject | undefined): Usage | undefined;
  /** A fresh reader for one streamed answer. */
  stream(): StreamUsage;
}
