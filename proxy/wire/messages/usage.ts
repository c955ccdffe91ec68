import type { JsonObject } from '../../../shared/json.js';
import { isObject } from '../../../shared/json.js';
import type { Usage } from '../../call.js';
import { malformedCounts, tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';

const MESSAGES_COUNTS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

/**
 * Anthropic's usage object → the neutral split. `input_tokens` is already
 * the uncached part; `cache_creation_input_tokens` counts every cache write,
 * of which `cache_creation.ephemeral_1h_input_tokens` went to the 1-hour
 * cache (the 5-minute part is `ephemeral_5m_input_tokens` when given, else
 * the rest: no token counted twice). Output includes any thinking.
 */
function messagesSplit(u: JsonObject): Usage {
  const writes = tokens(u.cache_creation_input_tokens);
  const detail = isObject(u.cache_creation) ? u.cache_creation : undefined;
  const w1h = detail ? tokens(detail.ephemeral_1h_input_tokens) : 0;
  const w5m = detail && detail.ephemeral_5m_input_tokens !== undefined ? tokens(detail.ephemeral_5m_input_tokens) : Math.max(0, writes - w1h);
  const server = isObject(u.server_tool_use) ? u.server_tool_use : undefined;
  return {
    inputTokens: tokens(u.input_tokens),
    cacheReadTokens: tokens(u.cache_read_input_tokens),
    cacheWrite5mTokens: w5m,
    cacheWrite1hTokens: w1h,
    outputTokens: tokens(u.output_tokens),
    reasoningTokens: 0,
    webSearchRequests: server ? tokens(server.web_search_requests) : 0,
  };
}

/** The prompt counts a usage object reports (a `message_delta` may repeat them, updated). */
function reportsPrompt(u: JsonObject): boolean {
  return u.input_tokens !== undefined || u.cache_read_input_tokens !== undefined || u.cache_creation_input_tokens !== undefined;
}

/**
 * A Messages stream: `content_block_delta`s counted, usage from
 * `message_start` (the prompt's split) and the closing `message_delta`
 * (cumulative output, web searches, and sometimes updated prompt totals).
 */
function messagesStream(): StreamUsage {
  let prompt: Usage | undefined;
  let output: number | undefined;
  let searches = 0;
  let deltas = 0;
  const reasons: string[] = [];
  // Usage is final only once the event that closes the answer has come.
  let final = false;
  // One malformed usage report spoils the stream's: it then bills its hold.
  let malformed = false;
  return {
    event(data, event) {
      if (event === 'content_block_delta') {
        deltas++;
        return;
      }
      if (event !== 'message_start' && event !== 'message_delta') return;
      try {
        const msg = JSON.parse(data) as JsonObject;
        const stop = (msg.delta as JsonObject | undefined)?.stop_reason;
        if (typeof stop === 'string') reasons.push(stop);
        const u = (event === 'message_start' ? (msg.message as JsonObject | undefined)?.usage : msg.usage) as JsonObject | undefined;
        if (!isObject(u)) return;
        if (malformedCounts(u, MESSAGES_COUNTS)) malformed = true;
        const split = messagesSplit(u);
        if (event === 'message_start' || reportsPrompt(u)) prompt = split;
        // message_delta's counts are cumulative: the last one is the total.
        if (u.output_tokens !== undefined) output = split.outputTokens;
        if (isObject(u.server_tool_use)) searches = split.webSearchRequests;
        if (event === 'message_delta') final = true;
      } catch {
        /* malformed event: ignore */
      }
    },
    usage: () =>
      !malformed && final && prompt !== undefined && output !== undefined
        ? { ...prompt, outputTokens: output, webSearchRequests: searches }
        : undefined,
    reportedSoFar: () => (prompt && !malformed ? { ...prompt, outputTokens: 0, webSearchRequests: searches } : undefined),
    outputSeen: () => Math.max(deltas, output ?? 0),
    finishReasons: () => reasons,
  };
}

export const messagesUsageReader: UsageReader = {
  fromAnswer: (u) => (malformedCounts(u, MESSAGES_COUNTS) ? undefined : messagesSplit(u)),
  stream: messagesStream,
};
