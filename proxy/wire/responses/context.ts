import { randomUUID } from 'node:crypto';
import type { ResponsesRequest } from './schema.js';
import { toolNames, type ToolNames } from './tool-names.js';

/** What translating one answer for a Responses client needs to know of its call. */
export interface ResponsesCall {
  /** The model name the client's answer reports: the alias it called. */
  alias: string;
  request: ResponsesRequest;
  /** Flat Chat tool names → what the client declared (namespaced and free-form tools). */
  names: ToolNames;
}

export function responsesCall(alias: string, request: ResponsesRequest): ResponsesCall {
  return { alias, request, names: toolNames(request.tools) };
}

/** A fresh id with OpenAI's prefix for its kind (`resp_`, `msg_`, `fc_`, `ctc_`). */
export function newId(prefix: string): string {
  return `${prefix}${randomUUID().replace(/-/g, '')}`;
}

/**
 * The request's settings the Responses answer object echoes back (the SDKs
 * and Codex read some of them, e.g. `tools` and `text`), with the API's
 * defaults where the client gave none.
 */
export function echoedSettings(call: ResponsesCall): Record<string, unknown> {
  const r = call.request;
  return {
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null },
    store: r.store ?? true,
    temperature: r.temperature ?? 1,
    text: { format: r.text?.format ?? { type: 'text' } },
    tool_choice: r.tool_choice ?? 'auto',
    tools: r.tools ?? [],
    top_p: r.top_p ?? 1,
    truncation: r.truncation ?? 'disabled',
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}
