import type { Usage } from '../../call.js';
import { malformedCounts, type StreamUsage, type UsageReader } from '../usage-reader.js';
import { isObject } from '../../../shared/json.js';
import { count, parseJson } from './json.js';

/** The neutral usage every format's reader answers with (proxy/call.ts). */
export type NeutralUsage = Usage;

/** Each `web_search_call` output item is one search the provider bills. */
function webSearches(output: unknown): number {
  if (!Array.isArray(output)) return 0;
  let n = 0;
  for (const item of output) if (isObject(item) && item.type === 'web_search_call') n++;
  return n;
}

const RESPONSES_COUNTS = ['input_tokens', 'output_tokens'] as const;

/**
 * A Responses answer object (the JSON body, or the `response` of a final
 * stream event) → its usage; undefined when it reports none or malformed counts. OpenAI's
 * `input_tokens` includes the cached ones (`input_tokens_details.cached_tokens`);
 * the Responses API reports no cache writes.
 */
export function usageFromResponse(response: unknown): NeutralUsage | undefined {
  if (!isObject(response) || !isObject(response.usage)) return undefined;
  const u = response.usage;
  if (malformedCounts(u, RESPONSES_COUNTS)) return undefined;
  const inputDetails = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const outputDetails = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  const input = count(u.input_tokens);
  const cached = Math.min(count(inputDetails.cached_tokens), input);
  return {
    inputTokens: input - cached,
    cacheReadTokens: cached,
    cacheWrite5mTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: count(u.output_tokens),
    reasoningTokens: count(outputDetails.reasoning_tokens),
    webSearchRequests: webSearches(response.output),
  };
}

/** The stream events that end an answer; each carries the whole response, usage included. */
const FINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The status of an answer that ended, for traces: `completed`, `incomplete` or `failed`. */
const STATUS = /"status":"([a-z_]+)"/;

/**
 * A Responses stream for the usage tap: text and argument deltas counted
 * (for a stream cut short), usage read off the final event, the only one
 * parsed; it carries the whole response, `web_search_call` items included.
 */
function responsesStream(): StreamUsage {
  let usage: NeutralUsage | undefined;
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
      const event = parseJson(data);
      const response = isObject(event) ? event.response : undefined;
      const status = isObject(response) && typeof response.status === 'string' ? response.status : STATUS.exec(data)?.[1];
      if (status) reasons.push(status);
      usage = usageFromResponse(response) ?? usage;
    },
    usage: () => usage,
    reportedSoFar: () => usage,
    outputSeen: () => Math.max(deltas, usage?.outputTokens ?? 0),
    finishReasons: () => reasons,
  };
}

/** How the Responses format reports usage, for the usage tap (wire/registry.ts). */
export const responsesUsageReader: UsageReader = {
  fromAnswer(u, bytes, answer) {
    // Searches are items of `output`, outside `usage`: the whole answer is parsed only when it has one.
    const whole = bytes.includes('web_search_call') ? answer() : undefined;
    return usageFromResponse({ usage: u, output: whole?.output });
  },
  stream: responsesStream,
};
