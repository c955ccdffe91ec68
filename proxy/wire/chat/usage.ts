import type { JsonObject } from '../../../shared/json.js';
import { isObject } from '../../../shared/json.js';
import type { Usage } from '../../call.js';
import { malformedCounts, tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';

const FINISH_REASON = /"finish_reason"\s*:\s*"([a-z_]+)"/;

/**
 * Whether a chunk holds a usage object (not the `"usage":null` OpenAI puts on
 * every chunk of a stream that asked for usage), written compactly or with the
 * space Python's `json.dumps` puts after a colon: two native searches, where a
 * pattern would cost more on every delta.
 */
function holdsUsage(data: string): boolean {
  return data.includes('"usage":{') || data.includes('"usage": {');
}

function namesFinishReason(data: string): boolean {
  return data.includes('"finish_reason":"') || data.includes('"finish_reason": "');
}

const CHAT_COUNTS = ['prompt_tokens', 'completion_tokens'] as const;

/**
 * OpenAI's usage object → the neutral split. `prompt_tokens` includes the
 * cached ones (`prompt_tokens_details.cached_tokens`), so the uncached input
 * is the difference; `completion_tokens` includes reasoning. Undefined when
 * the counts are malformed: the call then bills its hold. Cache writes
 * (`prompt_tokens_details.cache_write_tokens`, as Bedrock's Converse answers
 * are read: wire/bedrock/converse-answer.ts) are in `prompt_tokens` too,
 * billed at the 5-minute write price.
 */
function chatSplit(u: JsonObject): Usage | undefined {
  if (malformedCounts(u, CHAT_COUNTS)) return undefined;
  const prompt = tokens(u.prompt_tokens);
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cached = Math.min(prompt, tokens(details.cached_tokens));
  const written = Math.min(prompt - cached, tokens(details.cache_write_tokens));
  return {
    inputTokens: prompt - cached - written,
    cacheReadTokens: cached,
    cacheWrite5mTokens: written,
    cacheWrite1hTokens: 0,
    outputTokens: tokens(u.completion_tokens),
    reasoningTokens: isObject(u.completion_tokens_details) ? tokens(u.completion_tokens_details.reasoning_tokens) : 0,
    webSearchRequests: 0,
  };
}

/** A Chat Completions stream: deltas counted, the usage chunk (asked for with `include_usage`) read. */
function chatStream(): StreamUsage {
  let usage: Usage | undefined;
  let deltas = 0;
  const reasons: string[] = [];
  return {
    event(data) {
      if (data === '[DONE]') return;
      // Only the usage chunk needs parsing; every other chunk is one delta.
      if (!holdsUsage(data)) {
        deltas++;
        // Only the closing chunk of a choice names a reason: a byte search on the rest.
        if (namesFinishReason(data)) {
          const m = FINISH_REASON.exec(data);
          if (m) reasons.push(m[1]!);
        }
        return;
      }
      try {
        const u = (JSON.parse(data) as JsonObject).usage;
        if (isObject(u)) usage = chatSplit(u);
      } catch {
        /* malformed chunk: ignore */
      }
    },
    // Usage is final only once the chunk that closes the answer has come: it is the last chunk.
    usage: () => usage,
    reportedSoFar: () => usage,
    outputSeen: () => Math.max(deltas, usage?.outputTokens ?? 0),
    finishReasons: () => reasons,
  };
}

export const chatUsageReader: UsageReader = {
  fromAnswer: (u) => chatSplit(u),
  stream: chatStream,
};
