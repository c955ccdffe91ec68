/** OpenAI Responses answers, in the shape the real API sends (`POST /v1/responses`). */
import { argumentPieces, type PlannedCall } from './tools.js';
import { tokenPiece, tokenText, type OutputPlan } from './usage.js';

export interface ResponseAnswer {
  id: string;
  createdAt: number;
  model: string;
  inputTokens: number;
  /** Prompt tokens read from the provider's cache: part of inputTokens, as OpenAI counts them. */
  cachedTokens: number;
  /** Reasoning tokens: part of output_tokens, as OpenAI counts them, with a reasoning item before the answer. */
  reasoningTokens: number;
  /** Server-side web searches: one `web_search_call` item each, before the answer. */
  webSearches: number;
  output: OutputPlan;
  messageId: string;
  reasoningId: string;
  /** Tool calls to answer with instead of text, each with its `call_` id and `fc_` item id. */
  toolCalls: (PlannedCall & { id: string; itemId: string; custom: boolean })[];
  /** The request's settings the answer echoes. */
  echo: Record<string, unknown>;
  /** Set when the request's `include` asks for `reasoning.encrypted_content`: the reasoning item carries it. */
  encryptedReasoning: boolean;
  /** Set when the request held a `compaction_trigger`: the id of the one compaction item answered instead of text or calls. */
  compaction: string | undefined;
}

function usageJson(a: ResponseAnswer): string {
  const output = a.output.tokens + a.reasoningTokens;
  return (
    `{"input_tokens":${a.inputTokens},"input_tokens_details":{"cached_tokens":${a.cachedTokens}},` +
    `"output_tokens":${output},"output_tokens_details":{"reasoning_tokens":${a.reasoningTokens}},"total_tokens":${a.inputTokens + output}}`
  );
}

function reasoningItem(a: ResponseAnswer): string {
  const encrypted = a.encryptedReasoning ? `,"encrypted_content":"gAAAAB${Buffer.from(a.reasoningId).toString('base64')}=="` : '';
  return `{"id":"${a.reasoningId}","type":"reasoning","summary":[]${encrypted}}`;
}

function messageItem(a: ResponseAnswer, status: string, text: string | undefined): string {
  const content = text === undefined ? '' : `{"type":"output_text","annotations":[],"logprobs":[],"text":"${text}"}`;
  return `{"id":"${a.messageId}","type":"message","status":"${status}","content":[${content}],"role":"assistant"}`;
}

function callItem(call: ResponseAnswer['toolCalls'][number], status: string, args: string): string {
  if (call.custom) {
    const input = typeof call.input.input === 'string' ? call.input.input : args;
    return `{"id":"${call.itemId}","type":"custom_tool_call","status":"${status}","call_id":"${call.id}","name":${JSON.stringify(call.name)},"input":${JSON.stringify(status === 'completed' ? input : '')}}`;
  }
  if (call.namespace !== undefined) {
    return `{"id":"${call.itemId}","type":"function_call","status":"${status}","arguments":${JSON.stringify(args)},"call_id":"${call.id}","name":${JSON.stringify(call.name)},"namespace":${JSON.stringify(call.namespace)}}`;
  }
  return `{"id":"${call.itemId}","type":"function_call","status":"${status}","arguments":${JSON.stringify(args)},"call_id":"${call.id}","name":${JSON.stringify(call.name)}}`;
}

function searchItem(a: ResponseAnswer, n: number): string {
  return `{"id":"ws_${a.id.slice(5)}_${n}","type":"web_search_call","status":"completed","action":{"type":"search","query":"q${n}"}}`;
}

/** The provider's compaction: its summary is encrypted for the provider alone. */
function compactionItem(id: string): string {
  return `{"id":"${id}","type":"compaction","encrypted_content":"fake-encrypted-${id}"}`;
}

function outputItems(a: ResponseAnswer): string[] {
  if (a.compaction !== undefined) return [compactionItem(a.compaction)];
  const items = a.reasoningTokens > 0 ? [reasoningItem(a)] : [];
  for (let n = 0; n < a.webSearches; n++) items.push(searchItem(a, n));
  if (a.toolCalls.length) for (const c of a.toolCalls) items.push(callItem(c, 'completed', JSON.stringify(c.input)));
  else items.push(messageItem(a, 'completed', tokenText(a.output.tokens)));
  return items;
}

function status(a: ResponseAnswer): { status: string; incomplete: string } {
  return a.output.capped ? { status: 'incomplete', incomplete: '{"reason":"max_output_tokens"}' } : { status: 'completed', incomplete: 'null' };
}

function responseJson(a: ResponseAnswer, state: 'in_progress' | 'final'): string {
  const s = state === 'final' ? status(a) : { status: 'in_progress', incomplete: 'null' };
  const output = state === 'final' ? outputItems(a).join(',') : '';
  const usage = state === 'final' ? usageJson(a) : 'null';
  const echo = JSON.stringify(a.echo).slice(1, -1);
  return (
    `{"id":"${a.id}","object":"response","created_at":${a.createdAt},"status":"${s.status}","background":false,"error":null,` +
    `"incomplete_details":${s.incomplete},"model":${JSON.stringify(a.model)},"output":[${output}],${echo},` +
    `"service_tier":"default","usage":${usage}}`
  );
}

export function responseAnswerJson(a: ResponseAnswer): string {
  return responseJson(a, 'final');
}

/** Every SSE frame of the streamed answer, in order, each numbered as OpenAI numbers them. */
export function responseFrames(a: ResponseAnswer): string[] {
  const frames: string[] = [];
  const event = (type: string, fields: string) =>
    frames.push(`event: ${type}\ndata: {"type":"${type}","sequence_number":${frames.length}${fields ? `,${fields}` : ''}}\n\n`);
  event('response.created', `"response":${responseJson(a, 'in_progress')}`);
  event('response.in_progress', `"response":${responseJson(a, 'in_progress')}`);
  let index = 0;
  if (a.compaction !== undefined) {
    event('response.output_item.added', `"output_index":0,"item":${compactionItem(a.compaction)}`);
    event('response.output_item.done', `"output_index":0,"item":${compactionItem(a.compaction)}`);
    event('response.completed', `"response":${responseJson(a, 'final')}`);
    return frames;
  }
  if (a.reasoningTokens > 0) {
    event('response.output_item.added', `"output_index":${index},"item":${reasoningItem(a)}`);
    event('response.output_item.done', `"output_index":${index},"item":${reasoningItem(a)}`);
    index++;
  }
  if (a.toolCalls.length) {
    for (const call of a.toolCalls) {
      const at = `"item_id":"${call.itemId}","output_index":${index}`;
      const args = JSON.stringify(call.input);
      event('response.output_item.added', `"output_index":${index},"item":${callItem(call, 'in_progress', '')}`);
      if (call.custom) {
        const input = JSON.stringify(typeof call.input.input === 'string' ? call.input.input : args);
        event('response.custom_tool_call_input.delta', `${at},"delta":${input}`);
        event('response.custom_tool_call_input.done', `${at},"input":${input}`);
      } else {
        for (const piece of argumentPieces(call.input).slice(1))
          event('response.function_call_arguments.delta', `${at},"delta":${JSON.stringify(piece)}`);
        event('response.function_call_arguments.done', `${at},"arguments":${JSON.stringify(args)}`);
      }
      event('response.output_item.done', `"output_index":${index},"item":${callItem(call, 'completed', args)}`);
      index++;
    }
  } else {
    const at = `"item_id":"${a.messageId}","output_index":${index},"content_index":0`;
    const text = tokenText(a.output.tokens);
    event('response.output_item.added', `"output_index":${index},"item":${messageItem(a, 'in_progress', undefined)}`);
    event('response.content_part.added', `${at},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`);
    for (let i = 1; i <= a.output.tokens; i++) event('response.output_text.delta', `${at},"delta":"${tokenPiece(i)}","logprobs":[]`);
    event('response.output_text.done', `${at},"text":"${text}","logprobs":[]`);
    event('response.content_part.done', `${at},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"${text}"}`);
    event('response.output_item.done', `"output_index":${index},"item":${messageItem(a, 'completed', text)}`);
  }
  const final = status(a).status === 'completed' ? 'response.completed' : 'response.incomplete';
  event(final, `"response":${responseJson(a, 'final')}`);
  return frames;
}
