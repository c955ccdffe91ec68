import type { JsonObject } from '../../../shared/json.js';
import { isObject } from '../../../shared/json.js';
import type { Usage } from '../../call.js';
import { malformedCounts, tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';

const FINISH_REASON = /"finish_reason"\s*:\s*"([a-z_]+)"/;

const SPACE = 0x20;
const COLON = 0x3a;
const BRACE = 0x7b;
const QUOTE = 0x22;

/**
 * Whether some `key` in a chunk has a value starting with `open`, however the
 * JSON is spaced (compact, or the space Python's `json.dumps` puts after a
 * colon). A search for the key, then a look at the bytes after it: every
 * chunk of a stream that asked for usage names `"usage":null` and
 * `"finish_reason":null`, so only the value's first byte tells the usage chunk
 * and a closing one.
 */
function valueOpens(data: string, key: string, open: number): boolean {
  for (let at = data.indexOf(key); at >= 0; at = data.indexOf(key, at + key.length)) {
    let i = at + key.length;
    while (data.charCodeAt(i) === SPACE) i++;
    if (data.charCodeAt(i) !== COLON) continue;
    do i++;
    while (data.charCodeAt(i) === SPACE);
    if (data.charCodeAt(i) === open) return true;
  }
  return false;
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
      if (!valueOpens(data, '"usage"', BRACE)) {
        deltas++;
        // Only the closing chunk of a choice names a reason: a byte search on the rest.
        if (valueOpens(data, '"finish_reason"', QUOTE)) {
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
