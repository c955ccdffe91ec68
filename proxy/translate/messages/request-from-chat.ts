import { invalidInput } from '../../../shared/errors.js';
import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { createChatAnswer } from './answer-to-chat.js';
import type { Translator } from '../types.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Chat Completions client calling a provider that speaks only Messages:
 * the request is rebuilt field by field; what Messages cannot express and
 * would change the answer is refused with a 400 naming the field.
 */
export const chatToMessages: Translator = {
  request: chatRequestToMessages,
  answer: (call) => createChatAnswer(call.alias, call.stream && includeUsage(call.body)),
};

type Json = Record<string, unknown>;
type Block = Json;
interface Turn {
  role: 'user' | 'assistant';
  content: string | Block[];
}

function given(v: unknown): boolean {
  return v !== undefined && v !== null;
}

const PROVIDER = "this model's provider speaks only the Messages format";

function refuse(field: string, why: string): never {
  throw invalidInput(`${field}: ${why}`, 'unsupported_parameter');
}

function bad(field: string, why: string): never {
  throw invalidInput(`${field}: ${why}`);
}

function includeUsage(body: Json): boolean {
  return isObject(body.stream_options) && body.stream_options.include_usage === true;
}

/**
 * Fields that do not change what the model answers (storage, routing,
 * caching and latency hints): dropped. Anything neither here nor translated
 * below is refused, so a new field never silently changes an answer.
 */
const DROPPED = new Set([
  'store',
  'metadata',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'seed',
  'prediction',
  'stream_options',
  'parallel_tool_calls',
]);

/** Refused unless they hold a value Messages can honour: a neutral one (then dropped) or, for response_format, a JSON schema (translated). */
const NEUTRAL: Record<string, (v: unknown) => boolean> = {
  n: (v) => v === 1,
  logprobs: (v) => v === false,
  frequency_penalty: (v) => v === 0,
  presence_penalty: (v) => v === 0,
  logit_bias: (v) => isObject(v) && Object.keys(v).length === 0,
  response_format: (v) => isObject(v) && (v.type === 'text' || v.type === 'json_schema'),
  modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text',
};

const WHY_REFUSED: Record<string, string> = {
  n: `only one choice can be generated (${PROVIDER}).`,
  logprobs: `log probabilities are not available (${PROVIDER}).`,
  top_logprobs: `log probabilities are not available (${PROVIDER}).`,
  response_format: `only json_schema structured output translates (${PROVIDER}); JSON mode without a schema has no counterpart.`,
  functions: 'use tools; the legacy functions field is not translated.',
  function_call: 'use tool_choice; the legacy function_call field is not translated.',
};

/** Fields translated below, each checked where it is read. */
const TRANSLATED = new Set([
  'model',
  'messages',
  'stream',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'user',
  'tools',
  'tool_choice',
]);

function checkFields(body: Json): void {
  for (const field in body) {
    if (TRANSLATED.has(field) || DROPPED.has(field)) continue;
    const v = body[field];
    if (!given(v)) continue;
    const neutral = NEUTRAL[field];
    if (neutral?.(v)) continue;
    refuse(field, WHY_REFUSED[field] ?? `not supported (${PROVIDER}).`);
  }
}

/** `data:image/png;base64,AAAA` → an image source block; an http(s) URL → a URL source. */
function imageBlock(part: Json, field: string): Block {
  const image = part.image_url;
  const url = isObject(image) ? image.url : undefined;
  if (typeof url !== 'string') bad(`${field}.image_url.url`, 'a URL string is required.');
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const meta = comma < 0 ? '' : url.slice(5, comma);
    if (!meta.endsWith(';base64')) bad(`${field}.image_url.url`, 'a data URL must be base64-encoded (data:<type>;base64,<data>).');
    return { type: 'image', source: { type: 'base64', media_type: meta.slice(0, -7), data: url.slice(comma + 1) } };
  }
  if (!/^https?:\/\//i.test(url)) bad(`${field}.image_url.url`, 'must be an http(s) URL or a base64 data URL.');
  return { type: 'image', source: { type: 'url', url } };
}

/** A message's content → Messages blocks; `images` says whether image parts are allowed in this role. */
function contentBlocks(content: unknown, field: string, images: boolean): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!given(content)) return [];
  if (!Array.isArray(content)) bad(field, 'must be a string or an array of content parts.');
  return content.map((part: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(part)) bad(at, 'must be a content part object.');
    if (part.type === 'text' || part.type === 'refusal') {
      const text = part.type === 'text' ? part.text : part.refusal;
      if (typeof text !== 'string') bad(`${at}.${part.type}`, 'must be a string.');
      return { type: 'text', text };
    }
    if (part.type === 'image_url' && images) return imageBlock(part, at);
    return refuse(`${at}.type`, `${JSON.stringify(part.type)} parts are not supported here (${PROVIDER}).`);
  });
}

/** The text of a system/developer/tool message: a string or text parts. */
function textOf(content: unknown, field: string): string | Block[] {
  if (typeof content === 'string') return content;
  return contentBlocks(content, field, false);
}

function toolUse(call: unknown, field: string): Block {
  if (!isObject(call)) bad(field, 'must be an object.');
  if (call.type !== undefined && call.type !== 'function') refuse(`${field}.type`, `only function tool calls are supported (${PROVIDER}).`);
  const fn = call.function;
  if (typeof call.id !== 'string') bad(`${field}.id`, 'a tool call id is required.');
  if (!isObject(fn) || typeof fn.name !== 'string') bad(`${field}.function.name`, 'a function name is required.');
  let input: unknown = {};
  if (typeof fn.arguments === 'string' && fn.arguments.trim() !== '') {
    try {
      input = JSON.parse(fn.arguments);
    } catch {
      bad(`${field}.function.arguments`, 'not valid JSON.');
    }
  } else if (given(fn.arguments) && typeof fn.arguments !== 'string') bad(`${field}.function.arguments`, 'must be a JSON string.');
  if (!isObject(input)) bad(`${field}.function.arguments`, 'must encode a JSON object.');
  return { type: 'tool_use', id: call.id, name: fn.name, input };
}

/** Chat messages → the Messages `system` and turns; consecutive tool results share one user turn. */
function conversation(messages: unknown[]): { system: Block[]; turns: Turn[] } {
  const system: Block[] = [];
  const turns: Turn[] = [];
  let toolTurn: Turn | undefined;
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) bad(at, 'must be a message object.');
    const role = m.role;
    if (role !== 'tool') toolTurn = undefined;
    switch (role) {
      case 'system':
      case 'developer': {
        const text = textOf(m.content, `${at}.content`);
        if (typeof text === 'string') {
          if (text !== '') system.push({ type: 'text', text });
        } else system.push(...text);
        return;
      }
      case 'user':
        turns.push({ role: 'user', content: typeof m.content === 'string' ? m.content : contentBlocks(m.content, `${at}.content`, true) });
        return;
      case 'assistant': {
        if (given(m.audio)) refuse(`${at}.audio`, `audio is not supported (${PROVIDER}).`);
        if (given(m.function_call)) refuse(`${at}.function_call`, 'use tool_calls; the legacy function_call field is not translated.');
        const calls = m.tool_calls;
        if (given(calls) && !Array.isArray(calls)) bad(`${at}.tool_calls`, 'must be an array.');
        if (typeof m.content === 'string' && !(Array.isArray(calls) && calls.length)) {
          turns.push({ role: 'assistant', content: m.content });
          return;
        }
        const content = contentBlocks(m.content, `${at}.content`, false);
        if (typeof m.refusal === 'string' && content.length === 0) content.push({ type: 'text', text: m.refusal });
        if (Array.isArray(calls)) calls.forEach((c: unknown, j) => content.push(toolUse(c, `${at}.tool_calls[${j}]`)));
        turns.push({ role: 'assistant', content });
        return;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string') bad(`${at}.tool_call_id`, 'the id of the tool call this answers is required.');
        const result: Block = { type: 'tool_result', tool_use_id: m.tool_call_id, content: textOf(m.content, `${at}.content`) };
        if (toolTurn) (toolTurn.content as Block[]).push(result);
        else {
          toolTurn = { role: 'user', content: [result] };
          turns.push(toolTurn);
        }
        return;
      }
      default:
        return refuse(`${at}.role`, `${JSON.stringify(role)} messages are not supported (${PROVIDER}).`);
    }
  });
  return { system, turns };
}

function tools(list: unknown): Block[] {
  if (!Array.isArray(list)) bad('tools', 'must be an array.');
  return list.map((t: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) refuse(`${at}.type`, `only function tools are supported (${PROVIDER}).`);
    const fn = t.function;
    if (typeof fn.name !== 'string') bad(`${at}.function.name`, 'a function name is required.');
    const tool: Block = { name: fn.name };
    if (typeof fn.description === 'string') tool.description = fn.description;
    tool.input_schema = isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
    return tool;
  });
}

function toolChoice(choice: unknown, parallel: unknown): Block | undefined {
  let out: Block | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'none') return { type: 'none' };
  else if (choice === 'required') out = { type: 'any' };
  else if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string') {
    out = { type: 'tool', name: choice.function.name };
  } else if (given(choice)) refuse('tool_choice', `must be auto, none, required or a named function (${PROVIDER}).`);
  // Chat Completions allows parallel tool calls unless told not to; Messages says so on tool_choice.
  if (parallel === false) (out ??= { type: 'auto' }).disable_parallel_tool_use = true;
  return out;
}

/** `response_format: {type:"json_schema"}` → Messages structured output; `text` is the default and needs nothing. */
function outputFormat(format: unknown): Json | undefined {
  if (!isObject(format) || format.type !== 'json_schema') return undefined;
  const spec = format.json_schema;
  if (!isObject(spec) || !isObject(spec.schema)) bad('response_format.json_schema.schema', 'a JSON schema object is required.');
  // The schema's name and strict flag do not reach the model: Messages always holds the answer to the schema.
  return { format: { type: 'json_schema', schema: spec.schema } };
}

function stopSequences(stop: unknown): string[] {
  const list = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) bad('stop', 'must be a string or an array of strings.');
  return list;
}

/** The client's checked Chat Completions call → a Messages request body for `model`. */
function chatRequestToMessages(call: ParsedCall, model: ModelConfig): Json {
  const body = call.body;
  checkFields(body);
  const { system, turns } = conversation(body.messages as unknown[]);
  const out: Json = {
    model: model.upstream_model,
    // Messages needs a ceiling: the client's, held to the model's own (a Messages provider refuses more),
    // or the model's when the client gave none — either way what the hold assumed.
    max_tokens: Math.min(call.maxTokens ?? model.max_output_tokens, model.max_output_tokens),
    messages: turns,
  };
  if (system.length) out.system = system.length === 1 ? system[0]!.text : system;
  if (given(body.temperature)) out.temperature = body.temperature;
  if (given(body.top_p)) out.top_p = body.top_p;
  if (given(body.stop)) {
    const stop = stopSequences(body.stop);
    if (stop.length) out.stop_sequences = stop;
  }
  if (given(body.user)) {
    if (typeof body.user !== 'string') bad('user', 'must be a string.');
    out.metadata = { user_id: body.user };
  }
  const hasTools = given(body.tools) && (body.tools as unknown[]).length !== 0;
  if (given(body.tools)) {
    const list = tools(body.tools);
    if (list.length) out.tools = list;
  }
  const choice = toolChoice(body.tool_choice, hasTools ? body.parallel_tool_calls : undefined);
  if (choice && hasTools) out.tool_choice = choice;
  else if (choice && choice.type !== 'none' && choice.type !== 'auto') bad('tool_choice', 'requires tools.');
  const output = outputFormat(body.response_format);
  if (output) out.output_config = output;
  if (call.stream) out.stream = true;
  return out;
}
