import type { JsonObject } from '../../../shared/json.js';
import { tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';

const FINISH_REASON = /"finish_reason":"([a-z_]+)"/;

/** A Chat Completions stream: deltas counted, the usage chunk (asked for with `include_usage`) read. */
function chatStream(): StreamUsage {
  let input: number | undefined;
  let output: number | undefined;
  let deltas = 0;
  const reasons: string[] = [];
  // Usage is final only once the chunk that closes the answer has come.
  let final = false;
  return {
    event(data) {
      if (data === '[DONE]') return;
      // Only the usage chunk needs parsing; every other chunk is one delta.
      if (!data.includes('"usage":{')) {
        deltas++;
        // Only the closing chunk of a choice names a reason: a byte search on the rest.
        if (data.includes('"finish_reason":"')) {
          const m = FINISH_REASON.exec(data);
          if (m) reasons.push(m[1]!);
        }
        return;
      }
      try {
        const u = (JSON.parse(data) as JsonObject).usage as JsonObject | null;
        if (u) {
          input = tokens(u.prompt_tokens);
          output = tokens(u.completion_tokens);
          final = true;
        }
      } catch {
        /* malformed chunk: ignore */
      }
    },
    usage: () => (final && input !== undefined && output !== undefined ? { inputTokens: input, outputTokens: output } : undefined),
    inputReported: () => input,
    outputSeen: () => Math.max(deltas, output ?? 0),
    finishReasons: () => reasons,
  };
}

export const chatUsage: UsageReader = {
  fromUsage: (u) => ({ inputTokens: tokens(u.prompt_tokens), outputTokens: tokens(u.completion_tokens) }),
  stream: chatStream,
};
