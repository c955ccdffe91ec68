import type { JsonObject } from '../../../shared/json.js';
import { tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';

/** Anthropic counts cached prompt tokens separately; they are all input to bill. */
function inputTokens(u: JsonObject): number {
  return tokens(u.input_tokens) + tokens(u.cache_creation_input_tokens) + tokens(u.cache_read_input_tokens);
}

/** A Messages stream: `content_block_delta`s counted, usage from `message_start` and the closing `message_delta`. */
function messagesStream(): StreamUsage {
  let input: number | undefined;
  let output: number | undefined;
  let deltas = 0;
  const reasons: string[] = [];
  // Usage is final only once the event that closes the answer has come.
  let final = false;
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
        if (!u) return;
        if (event === 'message_start' || u.input_tokens !== undefined) input = inputTokens(u);
        // message_delta's output_tokens is cumulative: the last one is the total.
        if (u.output_tokens !== undefined) output = tokens(u.output_tokens);
        if (event === 'message_delta') final = true;
      } catch {
        /* malformed event: ignore */
      }
    },
    usage: () => (final && input !== undefined && output !== undefined ? { inputTokens: input, outputTokens: output } : undefined),
    inputReported: () => input,
    outputSeen: () => Math.max(deltas, output ?? 0),
    finishReasons: () => reasons,
  };
}

export const messagesUsage: UsageReader = {
  fromUsage: (u) => ({ inputTokens: inputTokens(u), outputTokens: tokens(u.output_tokens) }),
  stream: messagesStream,
};
