import type { Usage } from '../../call.js';
import type { JsonObject } from '../../../shared/json.js';
import { billedCount, malformedCounts, tokens } from '../usage-reader.js';

const CONVERSE_COUNTS = ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens'] as const;

/**
 * Converse's `usage` (a whole answer's, or the `metadata` event's at the
 * end of ConverseStream) → the neutral split. Bedrock reports `inputTokens`
 * apart from the cache's reads and writes (`totalTokens` is all four), and
 * every write as one count: it is billed at the 5-minute write price.
 * Undefined when a count is malformed: the call then bills its hold.
 */
export function converseUsage(u: JsonObject): Usage | undefined {
  if (malformedCounts(u, CONVERSE_COUNTS)) return undefined;
  return {
    inputTokens: billedCount(u.inputTokens),
    cacheReadTokens: tokens(u.cacheReadInputTokens),
    cacheWrite5mTokens: tokens(u.cacheWriteInputTokens),
    cacheWrite1hTokens: 0,
    outputTokens: billedCount(u.outputTokens),
    reasoningTokens: 0,
    webSearchRequests: 0,
  };
}
