import { invalidInput } from '../../../shared/errors.js';
import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { createChatAnswer } from './stream-to-chat.js';
import { budgetOfEffort, isChatEffort } from '../../translate/reasoning.js';
import { type TranslateOptions, type Translation, type Translator } from '../../translate/types.js';
import { MESSAGES_USER_MAX, cappedUserId } from '../../translate/user-id.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Chat Completions client calling a provider that speaks only Messages:
 * the request is rebuilt field by field. What has a Messages counterpart is
 * translated; a hint Messages cannot honour (seed, penalties, storage and
 * routing hints, reasoning where Anthropic's thinking rules cannot hold) is
 * dropped and its name returned; what would change the answer the client
 * relies on (`n > 1`, log probabilities, JSON mode without a schema) is
 * refused with a 400 naming the field.
 */
export const chatToMessages: Translator = {
  translate: chatRequestToMessages,
  request: (call, model) => chatRequestToMessages(call, model, { reasoning: model.reasoning }).request,
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
 * Values that ask for nothing beyond Messages' own behaviour: given so, a
 * field is passed over silently. Any other value of a dropped field is named.
 */
const NEUTRAL: Record<string, (v: unknown) => boolean> = {
  n: (v) => v === 1,
  logprobs: (v) => v === false,
  top_logprobs: (v) => v === 0,
  frequency_penalty: (v) => v === 0,
  presence_penalty: (v) => v === 0,
  logit_bias: (v) => isObject(v) && Object.keys(v).length === 0,
  response_format: (v) => isObject(v) && v.type === 'text',
  modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text',
  store: (v) => v === false,
  service_tier: (v) => v === 'auto' || v === 'default',
  // Chat allows parallel tool calls unless told not to, as Messages does; `false` is translated with the tools.
  parallel_tool_calls: (v) => typeof v === 'boolean',
  // Read by the answer translator: the usage chunk comes when asked for.
  stream_options: () => true,
};

/** Refused unless neutral: without them the answer is not what the client relies on. */
const WHY_REFUSED: Record<string, string> = {
  n: `only one choice can be generated (${PROVIDER}).`,
  logprobs: `log probabilities are not available (${PROVIDER}).`,
  top_logprobs: `log probabilities are not available (${PROVIDER}).`,
  response_format: `only json_schema structured output translates (${PROVIDER}); JSON mode without a schema has no counterpart.`,
  modalities: `only text output is available (${PROVIDER}).`,
  audio: `audio output is not available (${PROVIDER}).`,
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
  'reasoning_effort',
  'web_search_options',
]);

/**
 * Refuses what would change the answer; drops by name what only hints
 * (seed, penalties, logit_bias, storage, caching, routing and fields newer
 * than this code).
 */
function checkFields(body: Json, dropped: Set<string>): void {
  for (const field in body) {
    if (TRANSLATED.has(field)) continue;
    const v = body[field];
    if (!given(v)) continue;
    const neutral = NEUTRAL[field];
    if (neutral?.(v) || (field === 'response_format' && isObject(v) && v.type === 'json_schema')) continue;
    if (WHY_REFUSED[field] !== undefined) refuse(field, WHY_REFUSED[field]);
    dropped.add(field);
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

/** Chat's `web_search_options` → Anthropic's web search server tool; the context size has no Messages form. */
function webSearchTool(options: unknown, dropped: Set<string>): Block {
  if (!isObject(options)) bad('web_search_options', 'must be an object.');
  const tool: Block = { type: 'web_search_20250305', name: 'web_search' };
  const where = isObject(options.user_location) ? options.user_location.approximate : undefined;
  if (isObject(where)) {
    const location: Json = { type: 'approximate' };
    for (const key of ['city', 'region', 'country', 'timezone']) if (typeof where[key] === 'string') location[key] = where[key];
    tool.user_location = location;
  }
  for (const key of Object.keys(options)) if (key !== 'user_location' && given(options[key])) dropped.add(`web_search_options.${key}`);
  return tool;
}

/**
 * `reasoning_effort` → `thinking`, only where Anthropic's rules for thinking
 * can all hold: the model entry says its provider reasons, the budget fits
 * (reasoning.ts: at least 1,024 and at most half of max_tokens), no tool use
 * is forced, temperature is left alone and top_p is at least 0.95, and no
 * tool result is in the history — in a tool loop Anthropic wants its signed
 * thinking blocks back, which a Chat client never received. Otherwise
 * dropped by name; `none` asks for no reasoning, which is Messages' default.
 */
function thinking(body: Json, out: Json, reasoning: boolean, dropped: Set<string>): void {
  const effort = body.reasoning_effort;
  if (!given(effort) || effort === 'none') return;
  if (!isChatEffort(effort)) bad('reasoning_effort', 'must be none, minimal, low, medium, high or xhigh.');
  const choice = out.tool_choice;
  const forced = isObject(choice) && (choice.type === 'any' || choice.type === 'tool');
  const sampled = (given(body.temperature) && body.temperature !== 1) || (typeof body.top_p === 'number' && body.top_p < 0.95);
  const toolResults = (body.messages as unknown[]).some((m) => isObject(m) && m.role === 'tool');
  const budget = budgetOfEffort(effort, out.max_tokens as number);
  if (!reasoning || forced || sampled || toolResults || budget === undefined) {
    dropped.add('reasoning_effort');
    return;
  }
  out.thinking = { type: 'enabled', budget_tokens: budget };
}

/** What the added user turn says: the least that makes the model answer afresh after its own last message. */
export const NEW_TURN_TEXT = 'Continue.';

/**
 * A conversation that ends on the assistant's text, for a client whose API
 * answers it with a new assistant turn (a Responses client): Messages would
 * continue that text instead, so a user turn asking to continue is added. A
 * final turn holding tool calls is left as it is: a user turn after it would
 * need their results.
 */
function askForNewTurn(turns: Turn[]): void {
  const last = turns.at(-1);
  if (last?.role !== 'assistant') return;
  if (Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_use')) return;
  turns.push({ role: 'user', content: NEW_TURN_TEXT });
}

/** The client's checked Chat Completions call → a Messages request body for `model`, and the names it dropped. */
function chatRequestToMessages(call: ParsedCall, model: ModelConfig, options: TranslateOptions = {}): Translation {
  const body = call.body;
  const dropped = new Set<string>();
  checkFields(body, dropped);
  const { system, turns } = conversation(body.messages as unknown[]);
  if (options.newTurn) askForNewTurn(turns);
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
    out.metadata = { user_id: cappedUserId(body.user, MESSAGES_USER_MAX) };
  }
  const hasTools = given(body.tools) && (body.tools as unknown[]).length !== 0;
  const list = given(body.tools) ? tools(body.tools) : [];
  if (given(body.web_search_options)) list.push(webSearchTool(body.web_search_options, dropped));
  if (list.length) out.tools = list;
  const choice = toolChoice(body.tool_choice, hasTools ? body.parallel_tool_calls : undefined);
  if (choice && list.length) out.tool_choice = choice;
  else if (choice && choice.type !== 'none' && choice.type !== 'auto') bad('tool_choice', 'requires tools.');
  const output = outputFormat(body.response_format);
  if (output) out.output_config = output;
  thinking(body, out, options.reasoning === true, dropped);
  if (call.stream) out.stream = true;
  return { request: out, dropped: [...dropped] };
}
