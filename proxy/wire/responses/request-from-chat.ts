import { isObject } from '../../../shared/json.js';
import { invalidInput } from '../../../shared/errors.js';
import { type Json } from './json.js';
import { DropList, type Mapped, type TargetAbilities } from './options.js';

/**
 * A Chat Completions request → the Responses request that asks the same,
 * for a provider that speaks only Responses. Messages become input items
 * (an assistant's tool calls become `function_call` items, tool messages
 * `function_call_output` items); nothing is stored at the provider
 * (`store: false`), as a Chat client expects. Chat fields Responses lacks
 * are dropped and named; `n > 1` and log probabilities are refused.
 */

const READ = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'user',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'reasoning_effort',
  'web_search_options',
  'store',
  'metadata',
  'prompt_cache_key',
  'safety_identifier',
  'service_tier',
  'n',
  'logprobs',
  'top_logprobs',
]);

/** Default values that ask nothing of the model: not worth naming as dropped. */
const NEUTRAL: Record<string, (v: unknown) => boolean> = {
  frequency_penalty: (v) => v === 0,
  presence_penalty: (v) => v === 0,
  logit_bias: (v) => isObject(v) && Object.keys(v).length === 0,
  modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text',
  stop: (v) => v === null || (Array.isArray(v) && v.length === 0),
};

function refuse(body: Json): void {
  if (typeof body.n === 'number' && body.n > 1) throw invalidInput('n: only one choice can be generated for this model.', 'unsupported_parameter');
  if (body.logprobs === true || (typeof body.top_logprobs === 'number' && body.top_logprobs > 0)) {
    throw invalidInput('logprobs: log probabilities are not available for this model.', 'unsupported_parameter');
  }
}

/** A Chat content value → Responses content parts (`input_text`/`input_image` for user turns, `output_text` for the assistant). */
function parts(content: unknown, assistant: boolean, drop: DropList): Json[] | string {
  if (typeof content === 'string') return content;
  const out: Json[] = [];
  if (!Array.isArray(content)) return out;
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string')
      out.push(assistant ? { type: 'output_text', text: part.text, annotations: [] } : { type: 'input_text', text: part.text });
    else if (part.type === 'refusal' && typeof part.refusal === 'string') out.push({ type: 'refusal', refusal: part.refusal });
    else if (part.type === 'image_url' && !assistant && isObject(part.image_url) && typeof part.image_url.url === 'string') {
      const image: Json = { type: 'input_image', image_url: part.image_url.url };
      image.detail = typeof part.image_url.detail === 'string' ? part.image_url.detail : 'auto';
      out.push(image);
    } else drop.add(`messages[].content[${String(part.type)}]`);
  }
  return out;
}

function textParts(content: readonly unknown[]): Json[] {
  const out: Json[] = [];
  for (const p of content) if (isObject(p) && typeof p.text === 'string') out.push({ type: 'input_text', text: p.text });
  return out;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  let out = '';
  if (Array.isArray(content)) for (const p of content) if (isObject(p) && typeof p.text === 'string') out += p.text;
  return out;
}

function items(messages: readonly unknown[], drop: DropList): Json[] {
  const out: Json[] = [];
  for (const m of messages) {
    if (!isObject(m)) continue;
    switch (m.role) {
      case 'system':
      case 'developer':
        // Several system texts (Messages' system blocks, reached through Chat) stay apart as parts; joined, their boundary would be lost.
        out.push({ type: 'message', role: m.role, content: Array.isArray(m.content) ? textParts(m.content) : text(m.content) });
        break;
      case 'user':
        out.push({ type: 'message', role: m.role, content: parts(m.content, false, drop) });
        break;
      case 'assistant': {
        const content = parts(m.content, true, drop);
        const stated = typeof content === 'string' ? (content === '' ? [] : [{ type: 'output_text', text: content, annotations: [] }]) : content;
        if (typeof m.refusal === 'string' && m.refusal) stated.push({ type: 'refusal', refusal: m.refusal });
        if (stated.length) out.push({ type: 'message', role: 'assistant', content: stated });
        for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
          if (!isObject(c) || !isObject(c.function)) continue;
          out.push({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments });
        }
        break;
      }
      case 'tool':
        out.push({ type: 'function_call_output', call_id: m.tool_call_id, output: text(m.content) });
        break;
      default:
        drop.add(`messages[${String(m.role)}]`);
    }
  }
  return out;
}

function tools(body: Json, out: Json, drop: DropList): void {
  const list: Json[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t)) continue;
    if (t.type === 'function' && isObject(t.function)) {
      const fn = t.function;
      const tool: Json = { type: 'function', name: fn.name };
      if (typeof fn.description === 'string') tool.description = fn.description;
      tool.parameters = isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
      // Responses makes function tools strict unless told; Chat's default is not strict.
      tool.strict = fn.strict === true;
      list.push(tool);
    } else drop.add(`tools[${String(t.type)}]`);
  }
  if (isObject(body.web_search_options)) {
    const o = body.web_search_options;
    const tool: Json = { type: 'web_search' };
    if (typeof o.search_context_size === 'string') tool.search_context_size = o.search_context_size;
    if (isObject(o.user_location) && isObject(o.user_location.approximate))
      tool.user_location = { type: 'approximate', ...o.user_location.approximate };
    list.push(tool);
  }
  if (list.length) out.tools = list;
  const choice = body.tool_choice;
  if (typeof choice === 'string') out.tool_choice = choice;
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    out.tool_choice = { type: 'function', name: choice.function.name };
  } else if (choice !== undefined && choice !== null) drop.add('tool_choice');
  if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
}

function responseFormat(body: Json, out: Json, drop: DropList): void {
  const f = body.response_format;
  if (!isObject(f) || f.type === 'text') return;
  if (f.type === 'json_object') out.text = { format: { type: 'json_object' } };
  else if (f.type === 'json_schema' && isObject(f.json_schema)) {
    const { name, schema, description, strict } = f.json_schema;
    out.text = {
      format: {
        type: 'json_schema',
        name: typeof name === 'string' ? name : 'response',
        schema: isObject(schema) ? schema : {},
        ...(typeof description === 'string' ? { description } : {}),
        ...(typeof strict === 'boolean' ? { strict } : {}),
      },
    };
  } else drop.add('response_format');
}

/** `model` is the provider's model name. */
export function requestFromChat(body: Json, model: string, abilities: TargetAbilities): Mapped {
  refuse(body);
  const drop = new DropList();
  const out: Json = { model, input: items(Array.isArray(body.messages) ? body.messages : [], drop) };
  tools(body, out, drop);
  const limits = [body.max_completion_tokens, body.max_tokens].filter((v): v is number => typeof v === 'number');
  if (limits.length) out.max_output_tokens = Math.min(...limits);
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.user === 'string') out.user = body.user;
  if (typeof body.safety_identifier === 'string') out.safety_identifier = body.safety_identifier;
  if (typeof body.prompt_cache_key === 'string') out.prompt_cache_key = body.prompt_cache_key;
  if (typeof body.service_tier === 'string') out.service_tier = body.service_tier;
  if (isObject(body.metadata)) out.metadata = body.metadata;
  responseFormat(body, out, drop);
  if (typeof body.reasoning_effort === 'string') {
    if (abilities.reasoning) out.reasoning = { effort: body.reasoning_effort };
    else drop.add('reasoning_effort');
  }
  // A Chat client expects nothing kept at the provider; store only if it asked (OpenAI's Chat `store`).
  out.store = body.store === true;
  if (body.stream === true) out.stream = true;
  for (const field in body) {
    if (READ.has(field)) continue;
    const v = body[field];
    if (v === undefined || v === null || NEUTRAL[field]?.(v)) continue;
    drop.add(field);
  }
  return { request: out, dropped: drop.list() };
}
