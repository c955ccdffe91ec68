import { completionFrames, completionJson } from './chat-completions.js';
import type { Dialect } from './errors.js';
import type { IdSource } from './ids.js';
import { messageFrames, messageJson } from './messages.js';
import { plannedToolCalls } from './tools.js';
import { countInputTokens, planOutput, requestStops, requestTokenLimit } from './usage.js';

/** A model answer ready to send: one JSON body, or the SSE frames of a stream. */
export type Answer = { stream: false; json: string; tokens: number } | { stream: true; frames: string[] };

/** The answer to an accepted request, `wanted` tokens long unless the request's limit is lower. */
export function buildAnswer(dialect: Dialect, body: Record<string, unknown>, wanted: number, ids: IdSource): Answer {
  const model = body.model as string;
  const inputTokens = countInputTokens(body);
  const output = planOutput(requestTokenLimit(body), wanted, requestStops(body));
  const stream = body.stream === true;
  // A call capped by max_tokens or cut by a stop sequence ends in text, as a real model's would.
  const calls = output.capped || output.stopSequence !== undefined ? [] : plannedToolCalls(dialect, body);
  if (dialect === 'openai') {
    const toolCalls = calls.map((c) => ({ ...c, id: ids.next('call_') }));
    const completion = { id: ids.next('chatcmpl-'), created: Math.floor(Date.now() / 1000), model, inputTokens, output, toolCalls };
    if (!stream) return { stream: false, json: completionJson(completion), tokens: output.tokens };
    const options = body.stream_options as { include_usage?: unknown } | null | undefined;
    return { stream: true, frames: completionFrames(completion, options?.include_usage === true) };
  }
  const message = { id: ids.next('msg_'), model, inputTokens, output, toolCalls: calls.map((c) => ({ ...c, id: ids.next('toolu_') })) };
  if (!stream) return { stream: false, json: messageJson(message), tokens: output.tokens };
  return { stream: true, frames: messageFrames(message) };
}
