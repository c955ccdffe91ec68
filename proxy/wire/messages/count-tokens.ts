import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { createTokenCounter, type TokenCounter } from '../../token-counter.js';
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

/**
 * The counting worker, started on the first local count rather than at every
 * proxy start (most deployments never count locally). One per process: the
 * edge has no shutdown hook for it, and the worker does not keep the process
 * alive.
 */
let counter: TokenCounter | undefined;

/** The texts a message's content puts before the model, and its images' flat cost. */
function contentTexts(content: unknown, texts: string[]): number {
  if (typeof content === 'string') {
    texts.push(content);
    return 0;
  }
  if (!Array.isArray(content)) return 0;
  let images = 0;
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image_url') images += IMAGE_TOKENS;
  }
  return images;
}

/**
 * The input tokens of a Messages count_tokens call, estimated over its Chat
 * Completions translation. The text is counted in a worker thread, exactly
 * for a time budget and estimated from its length beyond it
 * (token-counter.ts): a multi-MiB body must not stall the proxy.
 */
export async function estimateCountTokens(call: ParsedCall, model: ModelConfig): Promise<number> {
  return estimateChatTokens(chatRequest(call, model).request);
}

/** The input tokens of a Chat Completions request (any format's call translated to Chat), estimated as above. */
export async function estimateChatTokens(chat: Json): Promise<number> {
  const { fixed, texts } = chatTexts(chat);
  counter ??= createTokenCounter();
  return fixed + (await counter.count(texts));
}

/** What a Chat Completions request puts before the model: the texts to count, and the tokens known without counting (framing, images). */
export function chatTexts(chat: Json): { fixed: number; texts: string[] } {
  let fixed = REPLY_PRIMING;
  const texts: string[] = [];
  for (const m of chat.messages as Json[]) {
    fixed += PER_MESSAGE + contentTexts(m.content, texts);
    if (Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls as Json[]) {
        const fn = c.function as Json;
        texts.push(String(fn.name), String(fn.arguments));
      }
    }
  }
  // Tool definitions reach the model as text too: count their JSON.
  if (Array.isArray(chat.tools)) texts.push(JSON.stringify(chat.tools));
  return { fixed, texts };
}
