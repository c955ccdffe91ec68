import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { chatRequest } from './request-to-chat.js';
import { isObject } from '../../../shared/json.js';

/**
 * count_tokens for a model whose provider speaks only Chat Completions,
 * which has no counting endpoint: an estimate made here, with OpenAI's
 * o200k_base encoding (GPT-4o, GPT-4.1, GPT-5, o-series) from gpt-tokenizer.
 * The request is first translated as a model call would be, so what such a
 * call would refuse is refused here too, and what is counted is what the
 * provider would be sent. Models of other families tokenize differently:
 * the figure is an estimate, and docs/proxy.md says so.
 */

type Json = Record<string, unknown>;

/** OpenAI's chat framing: each message costs a few tokens beyond its content, and the reply is primed with a few more. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
/**
 * An image's tokens depend on its size, which would mean decoding it. This is
 * what Anthropic's own rule (width × height / 750) gives for the largest image
 * it takes without downscaling: an estimate that errs high, as a client
 * deciding whether a conversation still fits wants.
 */
export const IMAGE_TOKENS = 1600;

type Counter = (text: string) => number;

/** The encoding is ~2 MB of tables, loaded on the first local count rather than at every proxy start. */
let counter: Promise<Counter> | undefined;
function loadCounter(): Promise<Counter> {
  counter ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => (text: string) => m.countTokens(text));
  return counter;
}

function contentTokens(content: unknown, count: Counter): number {
  if (typeof content === 'string') return count(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') total += count(part.text);
    else if (part.type === 'image_url') total += IMAGE_TOKENS;
  }
  return total;
}

/** The input tokens of a Messages count_tokens call, estimated over its Chat Completions translation. */
export async function estimateCountTokens(call: ParsedCall, model: ModelConfig): Promise<number> {
  const chat = chatRequest(call, model).request;
  const count = await loadCounter();
  let total = REPLY_PRIMING;
  for (const m of chat.messages as Json[]) {
    total += PER_MESSAGE + contentTokens(m.content, count);
    if (Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls as Json[]) {
        const fn = c.function as Json;
        total += count(String(fn.name)) + count(String(fn.arguments));
      }
    }
  }
  // Tool definitions reach the model as text too: count their JSON.
  if (Array.isArray(chat.tools)) total += count(JSON.stringify(chat.tools));
  return total;
}
