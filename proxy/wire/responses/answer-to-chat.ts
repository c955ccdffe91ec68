import { isObject } from '../../../shared/json.js';
import { type Json } from './json.js';

/**
 * A whole Responses answer object → the Chat completion a Chat client
 * expects: `message` items' text (and refusals) as the content, function
 * and free-form tool calls as `tool_calls` (a free-form call's text as the
 * one `input` argument), reasoning and hosted tool items left out.
 */

/** Responses usage → Chat usage (both count cached tokens inside the input total). */
export function chatUsageFromResponses(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  const input = typeof usage.input_tokens === 'number' ? usage.input_tokens : 0;
  const output = typeof usage.output_tokens === 'number' ? usage.output_tokens : 0;
  const inDetails = isObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const outDetails = isObject(usage.output_tokens_details) ? usage.output_tokens_details : {};
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: typeof inDetails.cached_tokens === 'number' ? inDetails.cached_tokens : 0 },
    completion_tokens_details: { reasoning_tokens: typeof outDetails.reasoning_tokens === 'number' ? outDetails.reasoning_tokens : 0 },
  };
}

/** The answer's status (and why it stopped early) → finish_reason. */
export function finishReason(response: Json, calledTools: boolean): string {
  const details = isObject(response.incomplete_details) ? response.incomplete_details : {};
  if (response.status === 'incomplete') return details.reason === 'content_filter' ? 'content_filter' : 'length';
  return calledTools ? 'tool_calls' : 'stop';
}

/** A tool call output item → a Chat tool call; undefined for any other item. */
export function chatToolCall(item: Json): Json | undefined {
  if (item.type === 'function_call' && typeof item.name === 'string') {
    return { id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' } };
  }
  if (item.type === 'custom_tool_call' && typeof item.name === 'string') {
    return { id: item.call_id, type: 'function', function: { name: item.name, arguments: JSON.stringify({ input: item.input ?? '' }) } };
  }
  return undefined;
}

export function chatIdFrom(responseId: unknown): string {
  return typeof responseId === 'string' ? `chatcmpl-${responseId.replace(/^resp_/, '')}` : 'chatcmpl-';
}

/** `alias` is the model name the client's answer reports. */
export function answerToChat(alias: string, response: unknown): Json {
  if (!isObject(response) || !Array.isArray(response.output)) {
    const error = isObject(response) && isObject(response.error) ? response.error : {};
    const message = typeof error.message === 'string' ? error.message : 'The model provider sent an answer that is not a response.';
    return { error: { message, type: 'api_error', param: null, code: null } };
  }
  let text = '';
  let refusal = '';
  const calls: Json[] = [];
  for (const item of response.output) {
    if (!isObject(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isObject(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
        else if (part.type === 'refusal' && typeof part.refusal === 'string') refusal += part.refusal;
      }
    } else {
      const c = chatToolCall(item);
      if (c) calls.push(c);
    }
  }
  const message: Json = { role: 'assistant', content: text === '' && calls.length ? null : text, refusal: refusal || null };
  if (calls.length) message.tool_calls = calls;
  return {
    id: chatIdFrom(response.id),
    object: 'chat.completion',
    created: typeof response.created_at === 'number' ? response.created_at : Math.floor(Date.now() / 1000),
    model: alias,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(response, calls.length > 0) }],
    usage: chatUsageFromResponses(response.usage),
  };
}
