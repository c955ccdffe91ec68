import { isObject } from '../../../shared/json.js';
import { parseJson, type Json } from './json.js';
import { providerError } from './errors.js';
import { echoedSettings, newId, type ResponsesCall } from './context.js';
import { originOf } from './tool-names.js';

/**
 * A whole Chat completion → the Responses answer object: the assistant's
 * text (and refusal) as one `message` item, each tool call as a
 * `function_call` item under the name the client declared (namespace given
 * apart), or a `custom_tool_call` for a free-form tool; usage in the
 * Responses shape, cached and reasoning tokens included.
 */

/** Chat usage → Responses usage (both count cached tokens inside the input total). */
export function responsesUsageFromChat(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  const input = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  const output = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
  const promptDetails = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completionDetails = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: typeof promptDetails.cached_tokens === 'number' ? promptDetails.cached_tokens : 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: typeof completionDetails.reasoning_tokens === 'number' ? completionDetails.reasoning_tokens : 0 },
    total_tokens: input + output,
  };
}

/** finish_reason → the answer's status and, when cut short, why. */
export function statusOf(finish: unknown): { status: string; incomplete_details: Json | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** A free-form tool's text from the one-argument function it was sent as; the raw arguments if they are not that. */
export function customInput(args: string): string {
  const parsed = parseJson(args);
  return isObject(parsed) && typeof parsed.input === 'string' ? parsed.input : args;
}

/** One Chat tool call → the Responses output item the client declared it as. */
export function callItem(call: ResponsesCall, id: string, callId: string, flatName: string, args: string, status = 'completed'): Json {
  const origin = originOf(call.names, flatName);
  if (origin.custom) return { id, type: 'custom_tool_call', status, call_id: callId, name: origin.name, input: customInput(args) };
  const item: Json = { id, type: 'function_call', status, call_id: callId, name: origin.name, arguments: args };
  if (origin.namespace !== undefined) item.namespace = origin.namespace;
  return item;
}

export function messageItem(id: string, text: string, refusal: string, status = 'completed'): Json {
  const content: Json[] = [];
  if (text || !refusal) content.push({ type: 'output_text', text, annotations: [], logprobs: [] });
  if (refusal) content.push({ type: 'refusal', refusal });
  return { id, type: 'message', status, role: 'assistant', content };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  let out = '';
  if (Array.isArray(content)) for (const p of content) if (isObject(p) && typeof p.text === 'string') out += p.text;
  return out;
}

/** The answer object around `output`; `responseId` ties stream events and the final object together. */
export function responseObject(call: ResponsesCall, responseId: string, createdAt: number, status: string, output: Json[], extra: Json): Json {
  return {
    id: responseId,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    model: call.alias,
    output,
    ...echoedSettings(call),
    usage: null,
    ...extra,
  };
}

export function responseIdFrom(chatId: unknown): string {
  return typeof chatId === 'string' && chatId !== '' ? `resp_${chatId.replace(/^chatcmpl-/, '')}` : newId('resp_');
}

export function answerFromChat(call: ResponsesCall, completion: unknown): Json {
  if (!isObject(completion) || !Array.isArray(completion.choices)) {
    // Some servers report errors with a 200; the status is sent by now, so the body says it.
    const message = providerError(completion)?.message ?? 'The model provider sent an answer that is not a chat completion.';
    return { error: { message, type: 'api_error', param: null, code: null } };
  }
  const choice: Json = isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message: Json = isObject(choice.message) ? choice.message : {};
  const output: Json[] = [];
  const text = contentText(message.content);
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  if (text || refusal) output.push(messageItem(newId('msg_'), text, refusal));
  for (const c of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(c) || !isObject(c.function) || typeof c.function.name !== 'string') continue;
    const args = typeof c.function.arguments === 'string' ? c.function.arguments : '{}';
    const callId = typeof c.id === 'string' && c.id ? c.id : newId('call_');
    output.push(callItem(call, newId('fc_'), callId, c.function.name, args));
  }
  const { status, incomplete_details } = statusOf(choice.finish_reason);
  const createdAt = typeof completion.created === 'number' ? completion.created : Math.floor(Date.now() / 1000);
  return responseObject(call, responseIdFrom(completion.id), createdAt, status, output, {
    incomplete_details,
    usage: responsesUsageFromChat(completion.usage),
  });
}
