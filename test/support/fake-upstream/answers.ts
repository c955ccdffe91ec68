import { completionFrames, completionJson } from './chat-completions.js';
import type { IdSource } from './ids.js';
import { messageFrames, messageJson } from './messages.js';
import { responseAnswerJson, responseFrames } from './responses.js';
import { plannedToolCalls } from './tools.js';
import type { OkBehavior, Wire } from './types.js';
import { countInputTokens, planOutput, requestStops, requestTokenLimit } from './usage.js';

/** A model answer ready to send: one JSON body, or the SSE frames of a stream. */
export type Answer = { stream: false; json: string; tokens: number } | { stream: true; frames: string[] };

/** The request settings a Responses answer echoes back, with the API's defaults. */
function echoed(body: Record<string, unknown>): Record<string, unknown> {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    metadata: body.metadata ?? {},
  };
}

/** A Responses request's free-form tool of that name (Codex's `apply_patch`). */
function isCustomTool(body: Record<string, unknown>, name: string): boolean {
  return Array.isArray(body.tools) && body.tools.some((t: { type?: unknown; name?: unknown }) => t.type === 'custom' && t.name === name);
}

/** The request ends a conversation Codex wants compacted: the Responses API answers one compaction item. */
function asksForCompaction(input: unknown): boolean {
  return Array.isArray(input) && input.some((i: { type?: unknown }) => i.type === 'compaction_trigger');
}

/** The answer to an accepted request, `wanted` tokens long unless the request's limit is lower. */
export function buildAnswer(wire: Wire, body: Record<string, unknown>, wanted: number, ids: IdSource, ok: OkBehavior | undefined): Answer {
  const model = body.model as string;
  // A provider billing input the body only refers to (a previous response, a file) reports more than the body holds.
  const inputTokens = ok?.inputTokens ?? countInputTokens(body);
  const output = planOutput(requestTokenLimit(body), wanted, requestStops(body));
  const stream = body.stream === true;
  // A call capped by max_tokens or cut by a stop sequence ends in text, as a real model's would.
  const scripted = ok?.tools;
  const calls =
    output.capped || output.stopSequence !== undefined || scripted === 'none' || ok?.textOnly
      ? []
      : scripted !== undefined
        ? scripted.map((c) => ({ name: c.name, input: c.input, ...(c.namespace === undefined ? {} : { namespace: c.namespace }) }))
        : plannedToolCalls(wire, body);
  if (wire === 'chat') {
    const toolCalls = calls.map((c) => ({ ...c, id: ids.next('call_') }));
    const cachedTokens = Math.min(ok?.cachedTokens ?? 0, inputTokens);
    const completion = { id: ids.next('chatcmpl-'), created: Math.floor(Date.now() / 1000), model, inputTokens, cachedTokens, output, toolCalls };
    if (!stream) return { stream: false, json: completionJson(completion), tokens: output.tokens };
    const options = body.stream_options as { include_usage?: unknown } | null | undefined;
    return { stream: true, frames: completionFrames(completion, options?.include_usage === true) };
  }
  if (wire === 'responses') {
    const answer = {
      id: ids.next('resp_'),
      createdAt: Math.floor(Date.now() / 1000),
      model,
      inputTokens,
      cachedTokens: Math.min(ok?.cachedTokens ?? 0, inputTokens),
      reasoningTokens: ok?.reasoningTokens ?? 0,
      webSearches: ok?.webSearches ?? 0,
      output,
      messageId: ids.next('msg_'),
      reasoningId: ids.next('rs_'),
      toolCalls: calls.map((c) => ({ ...c, custom: isCustomTool(body, c.name), id: ids.next('call_'), itemId: ids.next('fc_') })),
      echo: echoed(body),
      compaction: asksForCompaction(body.input) ? ids.next('cmp_') : undefined,
      encryptedReasoning: Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content'),
    };
    if (!stream) return { stream: false, json: responseAnswerJson(answer), tokens: output.tokens };
    return { stream: true, frames: responseFrames(answer) };
  }
  const message = {
    id: ids.next('msg_'),
    model,
    inputTokens,
    cache: {
      read: ok?.cacheReadTokens ?? 0,
      write5m: ok?.cacheWrite5mTokens ?? 0,
      write1h: ok?.cacheWrite1hTokens ?? 0,
      split: ok?.cacheSplit ?? true,
    },
    webSearches: ok?.webSearches ?? 0,
    output,
    toolCalls: calls.map((c) => ({ ...c, id: ids.next('toolu_') })),
  };
  if (!stream) return { stream: false, json: messageJson(message), tokens: output.tokens };
  return { stream: true, frames: messageFrames(message) };
}
