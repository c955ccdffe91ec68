import { isObject, type JsonObject } from '../../../shared/json.js';
import { noteReasoning, parse, providerMessage } from '../messages/answer-from-chat.js';
import { bedrockErrorBody } from './client-errors.js';
import { assistantBlocks } from './converse-request.js';

/**
 * A Chat Completions answer (the pivot's: a Chat provider's, or any other
 * provider's translated to Chat) as Converse answers a client of the
 * workspace's Converse route: `output.message.content` with text and
 * `toolUse` blocks, `stopReason`, `usage` with Bedrock's split of the input
 * (`inputTokens` excludes cache reads and writes, as converse-answer.ts
 * reads them), and `metrics.latencyMs`. Billing never reads this: the usage
 * tap reads the provider's own answer.
 */

const STOP_REASON: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filtered',
};

export function converseStopReason(finish: unknown): string {
  return (typeof finish === 'string' && STOP_REASON[finish]) || 'end_turn';
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Chat's usage → Converse's: Chat's `prompt_tokens` holds the cached and the written tokens, Converse's `inputTokens` neither. */
export function converseUsageOf(u: unknown): JsonObject {
  const usage = isObject(u) ? u : {};
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const prompt = count(usage.prompt_tokens);
  const read = Math.min(prompt, count(details.cached_tokens));
  const write = Math.min(prompt - read, count(details.cache_write_tokens));
  const output = count(usage.completion_tokens);
  return {
    inputTokens: prompt - read - write,
    outputTokens: output,
    totalTokens: prompt + output,
    cacheReadInputTokens: read,
    cacheWriteInputTokens: write,
  };
}

/** The answer's blocks; a refusal (Chat's `refusal` in place of content) is its text. */
function contentOf(message: JsonObject, dropped: Set<string>): JsonObject[] {
  noteReasoning(message, dropped);
  const refused = typeof message.refusal === 'string' && !message.content;
  return assistantBlocks(refused ? { ...message, content: message.refusal } : message);
}

/** A Chat completion (parsed) → Converse's answer; a completion without choices (an error some servers send with a 200) → its message as text. */
export function converseJsonOf(completion: unknown, latencyMs: number, dropped: Set<string>): JsonObject {
  const choice: unknown = isObject(completion) && Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  const message = isObject(choice) && isObject(choice.message) ? choice.message : undefined;
  const content = message ? contentOf(message, dropped) : [{ text: providerMessage(completion) ?? '' }];
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: converseStopReason(isObject(choice) ? choice.finish_reason : undefined),
    usage: converseUsageOf(isObject(completion) ? completion.usage : undefined),
    metrics: { latencyMs },
  };
}

/** The provider's error (in Chat's shape by now) → Bedrock's `{"message"}`; the exception's name goes in the head (client-errors.ts). */
export function converseErrorBody(status: number, body: Buffer): Buffer {
  const message = providerMessage(parse(body.toString('utf8'))) ?? `The model provider answered HTTP ${status}.`;
  return Buffer.from(bedrockErrorBody(message));
}
