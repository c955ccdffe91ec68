import { isObject, type JsonObject } from '../../../shared/json.js';
import type { Usage } from '../../call.js';
import { malformedCounts, tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';

/**
 * Gemini's `usageMetadata`. `promptTokenCount` includes the cached part
 * (`cachedContentTokenCount`, priced as cache reads); the tokens of tool
 * results Google's own tools fed back (`toolUsePromptTokenCount`) are input
 * too. `candidatesTokenCount` excludes thinking, `thoughtsTokenCount` is
 * thinking: both are output.
 */
const GEMINI_COUNTS = [
  'promptTokenCount',
  'candidatesTokenCount',
  'cachedContentTokenCount',
  'thoughtsTokenCount',
  'toolUsePromptTokenCount',
  'totalTokenCount',
] as const;

export function geminiSplit(u: JsonObject): Usage {
  const cached = tokens(u.cachedContentTokenCount);
  const thoughts = tokens(u.thoughtsTokenCount);
  return {
    inputTokens: Math.max(0, tokens(u.promptTokenCount) - cached) + tokens(u.toolUsePromptTokenCount),
    cacheReadTokens: cached,
    cacheWrite5mTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: tokens(u.candidatesTokenCount) + thoughts,
    reasoningTokens: thoughts,
    webSearchRequests: 0,
  };
}

/** Whether a chunk carries text or a function call: what a stream cut short bills as output seen. */
function hasOutput(chunk: JsonObject): boolean {
  const candidates = Array.isArray(chunk.candidates) ? chunk.candidates : [];
  return candidates.some((c: unknown) => isObject(c) && isObject(c.content) && Array.isArray(c.content.parts) && c.content.parts.length > 0);
}

/**
 * A Gemini stream (`?alt=sse`): every chunk may carry `usageMetadata`, each
 * the running total, so the last one is the answer's; the answer is complete
 * once a candidate says its `finishReason` (or the prompt was blocked).
 */
function geminiStream(): StreamUsage {
  let last: Usage | undefined;
  let chunks = 0;
  let final = false;
  let malformed = false;
  const reasons: string[] = [];
  return {
    event(data) {
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        return;
      }
      if (!isObject(chunk)) return;
      if (hasOutput(chunk)) chunks++;
      for (const c of Array.isArray(chunk.candidates) ? chunk.candidates : []) {
        if (isObject(c) && typeof c.finishReason === 'string') {
          reasons.push(c.finishReason);
          final = true;
        }
      }
      if (isObject(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string') final = true;
      const u = chunk.usageMetadata;
      if (!isObject(u)) return;
      if (malformedCounts(u, GEMINI_COUNTS)) malformed = true;
      last = geminiSplit(u);
    },
    usage: () => (!malformed && final ? last : undefined),
    reportedSoFar: () => (last && !malformed ? { ...last, outputTokens: 0, reasoningTokens: 0 } : undefined),
    outputSeen: () => Math.max(chunks, last?.outputTokens ?? 0),
    finishReasons: () => reasons,
  };
}

/** Reads `usageMetadata` (the whole answer's, handed over as `u`). */
export const geminiUsage: UsageReader = {
  answerKey: 'usageMetadata',
  fromAnswer: (u) => (malformedCounts(u, GEMINI_COUNTS) ? undefined : geminiSplit(u)),
  stream: geminiStream,
};

/** Gemini's usage → Chat Completions' (cached and reasoning tokens named in their details, as OpenAI does). */
export function chatUsageOf(u: unknown): JsonObject {
  const usage = isObject(u) ? u : {};
  const split = geminiSplit(usage);
  const prompt = split.inputTokens + split.cacheReadTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: split.outputTokens,
    total_tokens: prompt + split.outputTokens,
    prompt_tokens_details: { cached_tokens: split.cacheReadTokens },
    completion_tokens_details: { reasoning_tokens: split.reasoningTokens },
  };
}

/** Chat Completions' usage → Gemini's `usageMetadata` (thinking apart from the candidates' tokens, as Google reports it). */
export function usageMetadataOf(u: unknown): JsonObject {
  const usage = isObject(u) ? u : {};
  const prompt = tokens(usage.prompt_tokens);
  const completion = tokens(usage.completion_tokens);
  const cached = isObject(usage.prompt_tokens_details) ? tokens(usage.prompt_tokens_details.cached_tokens) : 0;
  const thoughts = Math.min(completion, isObject(usage.completion_tokens_details) ? tokens(usage.completion_tokens_details.reasoning_tokens) : 0);
  const out: JsonObject = { promptTokenCount: prompt, candidatesTokenCount: completion - thoughts, totalTokenCount: prompt + completion };
  if (cached > 0) out.cachedContentTokenCount = cached;
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  return out;
}
