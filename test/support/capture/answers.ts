// Plausible provider answers for the capture server: just enough of each wire
// format that a real client accepts the answer and goes on to its next call.
// The texts and ids are fixed so captures are the same from run to run.

export type Answer = { status: number; type: string; body: string };

/** A tool call the Messages answer makes instead of text, for a tool round trip. */
export type ToolCall = { name: string; input: Record<string, unknown> };

const sse = (events: Array<{ event?: string; data: unknown }>): string =>
  events.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`).join('');

const json = (value: unknown, status = 200): Answer => ({
  status,
  type: 'application/json',
  body: JSON.stringify(value),
});

const stream = (body: string): Answer => ({ status: 200, type: 'text/event-stream', body });

const TEXT = 'hi';

function responsesObject(model: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  const done = status === 'completed';
  return {
    id: 'resp_capture',
    object: 'response',
    created_at: 1764000000,
    status,
    model,
    output: done
      ? [
          {
            id: 'msg_capture',
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: TEXT, annotations: [] }],
          },
        ]
      : [],
    usage: done
      ? {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 1,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 11,
        }
      : null,
    error: null,
    incomplete_details: null,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  };
}

/** `POST …/responses`: the event sequence the Responses API streams for one text message. */
export function responsesAnswer(body: Record<string, unknown>): Answer {
  const model = typeof body.model === 'string' ? body.model : 'capture-model';
  if (body.stream !== true) return json(responsesObject(model, 'completed'));
  const item = { id: 'msg_capture', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  const part = { type: 'output_text', text: '', annotations: [] };
  const done = responsesObject(model, 'completed');
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: responsesObject(model, 'in_progress') },
    { type: 'response.in_progress', response: responsesObject(model, 'in_progress') },
    { type: 'response.output_item.added', output_index: 0, item },
    { type: 'response.content_part.added', item_id: 'msg_capture', output_index: 0, content_index: 0, part },
    { type: 'response.output_text.delta', item_id: 'msg_capture', output_index: 0, content_index: 0, delta: TEXT },
    { type: 'response.output_text.done', item_id: 'msg_capture', output_index: 0, content_index: 0, text: TEXT },
    {
      type: 'response.content_part.done',
      item_id: 'msg_capture',
      output_index: 0,
      content_index: 0,
      part: { ...part, text: TEXT },
    },
    { type: 'response.output_item.done', output_index: 0, item: (done.output as unknown[])[0] },
    { type: 'response.completed', response: done },
  ];
  return stream(sse(events.map((e, i) => ({ event: e.type as string, data: { ...e, sequence_number: i } }))));
}

const hasToolResult = (body: Record<string, unknown>): boolean =>
  Array.isArray(body.messages) &&
  body.messages.some((m: { content?: unknown }) => Array.isArray(m.content) && m.content.some((c: { type?: unknown }) => c.type === 'tool_result'));

const offersTool = (body: Record<string, unknown>, name: string): boolean =>
  Array.isArray(body.tools) && body.tools.some((t: { name?: unknown }) => t.name === name);

/** `POST …/messages`: a text answer, or `tool` as a tool_use when offered and no result came back yet. */
export function messagesAnswer(body: Record<string, unknown>, tool: ToolCall | undefined): Answer {
  const model = typeof body.model === 'string' ? body.model : 'capture-model';
  const useTool = tool !== undefined && offersTool(body, tool.name) && !hasToolResult(body);
  const block = useTool ? { type: 'tool_use', id: 'toolu_capture', name: tool.name, input: tool.input } : { type: 'text', text: TEXT };
  const stopReason = useTool ? 'tool_use' : 'end_turn';
  const message = {
    id: 'msg_capture',
    type: 'message',
    role: 'assistant',
    model,
    content: [block],
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  if (body.stream !== true) return json(message);
  const delta = useTool ? { type: 'input_json_delta', partial_json: JSON.stringify(tool.input) } : { type: 'text_delta', text: TEXT };
  const start = useTool ? { ...block, input: {} } : { type: 'text', text: '' };
  const events: Array<Record<string, unknown>> = [
    { type: 'message_start', message: { ...message, content: [], stop_reason: null } },
    { type: 'content_block_start', index: 0, content_block: start },
    { type: 'content_block_delta', index: 0, delta },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 1 } },
    { type: 'message_stop' },
  ];
  return stream(sse(events.map((e) => ({ event: e.type as string, data: e }))));
}

/** `POST …/chat/completions`, streamed or not. */
export function chatAnswer(body: Record<string, unknown>): Answer {
  const model = typeof body.model === 'string' ? body.model : 'capture-model';
  const base = { id: 'chatcmpl-capture', created: 1764000000, model };
  const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
  if (body.stream !== true)
    return json({
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }],
      usage,
    });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): { data: unknown } => ({
    data: { ...base, object: 'chat.completion.chunk', choices, ...extra },
  });
  return stream(
    sse([
      chunk([{ index: 0, delta: { role: 'assistant', content: TEXT }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }], { usage }),
    ]) + 'data: [DONE]\n\n',
  );
}

/** `GET …/models`: both SDK shapes in one list, so either client finds its alias. */
export function modelsAnswer(): Answer {
  return json({
    object: 'list',
    data: [{ id: 'capture-model', object: 'model', created: 1764000000, owned_by: 'capture', type: 'model' }],
    has_more: false,
  });
}

export function notFound(path: string): Answer {
  return json({ error: { type: 'not_found', message: `No route for ${path}` } }, 404);
}
