// The scripted provider behind codex-session.ts: each sampling call of the
// turn makes Codex use the next kind of tool it offers, each answer reports
// more input tokens than the session's compaction limit once the tools are
// done, and a compaction (the endpoint or the trigger item) is answered with
// one compaction item.
import type { Answer } from './answers.js';

export type SessionState = { step: number };

const STEPS = 4;

type Item = Record<string, unknown>;
type Tool = { type?: string; name?: string; tools?: Tool[] };

const sse = (events: Item[]): string =>
  events.map((e, i) => `event: ${String(e.type)}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join('');

const PATCH = '*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+hello, patched\n*** End Patch\n';

function toolCall(tools: Tool[], step: number): Item | undefined {
  const id = `call_step${step}`;
  const byName = (name: string): Tool | undefined => tools.find((t) => t.name === name);
  switch (step) {
    case 0:
      return { type: 'function_call', id: `fc_${step}`, call_id: id, name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo hello > a.txt' }) };
    case 1: {
      const patch = byName('apply_patch');
      if (patch?.type === 'custom') return { type: 'custom_tool_call', id: `ctc_${step}`, call_id: id, name: 'apply_patch', input: PATCH };
      return { type: 'function_call', id: `fc_${step}`, call_id: id, name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) };
    }
    case 2: {
      const ns = tools.find((t) => t.type === 'namespace' && t.tools?.some((m) => m.name === 'echo'));
      if (!ns) return undefined;
      return { type: 'function_call', id: `fc_${step}`, call_id: id, namespace: ns.name, name: 'echo', arguments: JSON.stringify({ text: 'ping' }) };
    }
    case 3:
      if (!byName('create_goal')) return undefined;
      return { type: 'function_call', id: `fc_${step}`, call_id: id, name: 'create_goal', arguments: JSON.stringify({ objective: 'say done' }) };
    default:
      return undefined;
  }
}

function response(model: string, output: Item[], inputTokens: number): Item {
  return {
    id: 'resp_session',
    object: 'response',
    created_at: 1764000000,
    status: 'completed',
    model,
    output,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + 5,
    },
    error: null,
    incomplete_details: null,
  };
}

const COMPACTION: Item = { type: 'compaction', id: 'cmp_session', encrypted_content: 'capture-compaction-summary' };

function responses(body: Item, state: SessionState): Answer {
  const model = typeof body.model === 'string' ? body.model : 'capture-model';
  const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
  const triggered = input.some((i) => i.type === 'compaction_trigger');
  let item: Item;
  if (triggered) item = COMPACTION;
  else {
    const tools = Array.isArray(body.tools) ? (body.tools as Tool[]) : [];
    // A kind of tool this model is not offered is skipped.
    let call: Item | undefined;
    while (call === undefined && state.step < STEPS) call = toolCall(tools, state.step++);
    item = call ?? {
      type: 'message',
      id: 'msg_session',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'done', annotations: [] }],
    };
  }
  // Past the tools, the context looks full so Codex compacts before the next turn.
  const done = response(model, [item], state.step >= 2 && !triggered ? 7000 : 1000);
  const events: Item[] = [
    { type: 'response.created', response: { ...done, status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_item.added', output_index: 0, item },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: done },
  ];
  return { status: 200, type: 'text/event-stream', body: sse(events) };
}

export function codexSessionAnswer(method: string, path: string, body: unknown, state: SessionState): Answer {
  const fields = typeof body === 'object' && body !== null ? (body as Item) : {};
  if (method === 'POST' && path.endsWith('/responses/compact'))
    return {
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ id: 'resp_compact', object: 'response.compaction', output: [COMPACTION], usage: response('m', [], 1000).usage }),
    };
  if (method === 'POST' && path.endsWith('/responses')) return responses(fields, state);
  return { status: 404, type: 'application/json', body: JSON.stringify({ error: { message: `no ${method} ${path}`, type: 'not_found' } }) };
}
