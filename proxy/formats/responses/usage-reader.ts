import type { JsonObject } from '../../../shared/json.js';
import { tokens, type StreamUsage, type UsageReader } from '../usage-reader.js';
import { FINAL_EVENTS } from './usage.js';

/**
 * A Responses answer's tokens as the proxy bills them. OpenAI's
 * `input_tokens` already includes the cached ones (as Chat's
 * `prompt_tokens` does) and `output_tokens` the reasoning ones.
 */
function fromUsage(u: JsonObject): { inputTokens: number; outputTokens: number } {
  return { inputTokens: tokens(u.input_tokens), outputTokens: tokens(u.output_tokens) };
}

/** The status of an answer that ended, for traces: `completed`, `incomplete` or `failed`. */
const STATUS = /"status":"([a-z_]+)"/;

/** A Responses stream: text and argument deltas counted, usage read off the final event (the only one parsed). */
function responsesStream(): StreamUsage {
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  let deltas = 0;
  const reasons: string[] = [];
  return {
    event(data, name) {
      // OpenAI names every event; a nameless one is told by its data.
      const type = name ?? /"type":"([a-z_.]+)"/.exec(data)?.[1];
      if (type === undefined) return;
      if (type.endsWith('.delta')) {
        deltas++;
        return;
      }
      if (!FINAL_EVENTS.has(type)) return;
      try {
        const response = (JSON.parse(data) as JsonObject).response as JsonObject | undefined;
        const status = typeof response?.status === 'string' ? response.status : STATUS.exec(data)?.[1];
        if (status) reasons.push(status);
        const u = response?.usage as JsonObject | null | undefined;
        if (u) usage = fromUsage(u);
      } catch {
        /* malformed event: ignore */
      }
    },
    usage: () => usage,
    inputReported: () => usage?.inputTokens,
    outputSeen: () => Math.max(deltas, usage?.outputTokens ?? 0),
    finishReasons: () => reasons,
  };
}

export const responsesUsage: UsageReader = { fromUsage, stream: responsesStream };
