import { invalidInput } from '../../../shared/errors.js';
import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { createChatAnswerTranslator } from './stream-from-chat.js';
import { betasFor } from '../../translate/betas.js';
import { chatEffortOf, effortOfBudget } from '../../translate/reasoning.js';
import { type TranslateOptions, type Translation, type Translator } from '../../translate/types.js';
import { CHAT_USER_MAX, cappedUserId } from '../../translate/user-id.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Messages (Anthropic) client calling a provider that speaks only Chat
 * Completions: the request goes Messages → Chat here, the answer comes back
 * in answer-from-chat.ts and stream-from-chat.ts. What has a Chat counterpart is translated;
 * a hint the provider cannot honour (cache, context management, reasoning on
 * a model without it, Anthropic's own server tools, beta features) is dropped
 * and its name returned; only what would change the answer the client relies
 * on is refused (400 naming the field). docs/proxy.md lists every rule.
 */

type Json = Record<string, unknown>;
/** The names dropped so far, in the order met (a Set keeps both order and uniqueness). */
type Dropped = Set<string>;

function given(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** The Chat Completions API takes at most this many stop sequences. */
const MAX_STOP_SEQUENCES = 4;

function refuse(field: string, why: string): Error {
  return invalidInput(`${field}: ${why} This model's provider speaks only Chat Completions, so the call cannot be translated.`);
}

/** Top-level fields translated below; any other is dropped by name. */
const TRANSLATED = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'tool_choice',
  'stream',
  'temperature',
  'top_p',
  'stop_sequences',
  'metadata',
  'tools',
  'thinking',
  'output_config',
]);

function text(block: Json, field: string): string {
  if (typeof block.text !== 'string') throw invalidInput(`${field}.text: must be a string.`);
  return block.text;
}

/** An image block → a Chat image part: base64 data becomes a data: URL, a URL source stays a URL. */
function imagePart(block: Json, field: string): Json {
  const source = block.source;
  if (!isObject(source)) throw invalidInput(`${field}.source: an image source is required.`);
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw refuse(`${field}.source.type`, `an image source of type ${JSON.stringify(source.type)} has no Chat Completions form.`);
}

/**
 * A tool result's text (a string, or its text blocks) for its `tool` message;
 * its images go to `images`, since a `tool` message carries text only: they
 * reach the model in the user message that follows the results.
 */
function toolResultText(block: Json, field: string, images: Json[], dropped: Dropped): string {
  const content = block.content;
  let out = '';
  if (typeof content === 'string') out = content;
  else if (Array.isArray(content)) {
    for (const { block: part, at } of blocksOf(content, `${field}.content`, dropped)) {
      if (part.type === 'text') out += text(part, at);
      else if (part.type === 'image') images.push(imagePart(part, at));
      else throw noChatForm(part, at);
    }
  } else if (content !== undefined) throw invalidInput(`${field}.content: must be a string or an array of blocks.`);
  // Chat has no error flag on a tool message: say it in the content so the model still knows.
  return block.is_error === true ? `Error: ${out}` : out;
}

/**
 * Each block of a content array with its field path (`messages.2.content.0`).
 * A block's `cache_control` (a prompt-cache breakpoint) has no Chat form:
 * noted as dropped here, where every block passes.
 */
function blocksOf(content: unknown, field: string, dropped: Dropped): { block: Json; at: string }[] {
  if (!Array.isArray(content)) throw invalidInput(`${field}: must be a string or an array of content blocks.`);
  return content.map((block, i) => {
    if (!isObject(block)) throw invalidInput(`${field}.${i}: must be a content block object.`);
    if (given(block.cache_control)) dropped.add('cache_control');
    return { block, at: `${field}.${i}` };
  });
}

function textPart(block: Json, at: string): Json {
  return { type: 'text', text: text(block, at) };
}

function noChatForm(block: Json, at: string): Error {
  return refuse(`${at}.type`, `a ${JSON.stringify(block.type)} block has no Chat Completions form.`);
}

/** One user turn → its tool results as `tool` messages (first, in order), then the rest as one user message. */
function userMessages(content: unknown, field: string, out: Json[], dropped: Dropped): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const parts: Json[] = [];
  for (const { block, at } of blocksOf(content, field, dropped)) {
    if (block.type === 'text') parts.push(textPart(block, at));
    else if (block.type === 'image') parts.push(imagePart(block, at));
    else if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string') throw invalidInput(`${at}.tool_use_id: must be a string.`);
      out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolResultText(block, at, parts, dropped) });
    } else throw noChatForm(block, at);
  }
  if (parts.length) out.push({ role: 'user', content: parts });
}

/**
 * One assistant turn → text (string or text parts) and its tool_use blocks as
 * `tool_calls`, ids kept. Its other blocks are dropped, named by type
 * (`messages[thinking]`): reasoning verifies only on the provider that signed
 * it, and Anthropic's server tool calls and results ran on Anthropic's side;
 * the text the answer built on them stays.
 */
function assistantMessage(content: unknown, field: string, dropped: Dropped): Json {
  if (typeof content === 'string') return { role: 'assistant', content };
  const parts: Json[] = [];
  const calls: Json[] = [];
  for (const { block, at } of blocksOf(content, field, dropped)) {
    if (block.type === 'text') parts.push(textPart(block, at));
    else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalidInput(`${at}: a tool_use block needs an id and a name.`);
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    } else dropped.add(`messages[${String(block.type)}]`);
  }
  // Chat wants content or tool calls on an assistant message: an empty turn (say, reasoning only) is empty text.
  const empty = calls.length ? null : '';
  const message: Json = { role: 'assistant', content: parts.length === 0 ? empty : parts.length === 1 ? parts[0]!.text : parts };
  if (calls.length) message.tool_calls = calls;
  return message;
}

/** The top-level `system`, or a `system` turn within `messages`, → a Chat system message (undefined when there is none). */
function systemMessage(system: unknown, field: string, dropped: Dropped): Json | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return { role: 'system', content: system };
  const parts = blocksOf(system, field, dropped).map(({ block, at }) => {
    if (block.type !== 'text') throw invalidInput(`${at}.type: system blocks must be text.`);
    return textPart(block, at);
  });
  return { role: 'system', content: parts };
}

function chatMessages(body: Json, dropped: Dropped): Json[] {
  const out: Json[] = [];
  const system = systemMessage(body.system, 'system', dropped);
  if (system) out.push(system);
  const messages = body.messages as unknown[];
  messages.forEach((m, i) => {
    const field = `messages.${i}`;
    if (!isObject(m)) throw invalidInput(`${field}: must be a message object.`);
    if (m.role === 'user') userMessages(m.content, `${field}.content`, out, dropped);
    else if (m.role === 'assistant') {
      // A last assistant turn is a prefill: the answer continues it. A Chat model would start afresh instead.
      if (i === messages.length - 1) throw refuse(field, 'a final assistant turn (a prefill the answer continues) has no Chat Completions form.');
      out.push(assistantMessage(m.content, `${field}.content`, dropped));
    } else if (m.role === 'system') {
      // Instructions given mid-conversation (Claude Code sends them) stay where they were given.
      out.push(systemMessage(m.content, `${field}.content`, dropped) ?? { role: 'system', content: '' });
    } else throw invalidInput(`${field}.role: must be "user", "assistant" or "system".`);
  });
  return out;
}

/** Per-tool fields with no Chat counterpart that never change the answer: dropped without a name of their own. */
const TOOL_IGNORED = new Set(['type', 'name', 'input_schema', 'description', 'strict', 'cache_control']);

/**
 * Anthropic's web search tool → Chat's `web_search_options` (the provider
 * searches if its model can; the user's location carries over). Its limits
 * have no Chat form and are dropped by name.
 */
function webSearch(tool: Json, type: string, out: Json, dropped: Dropped): void {
  const options: Json = {};
  const where = tool.user_location;
  if (isObject(where)) {
    const approximate: Json = {};
    for (const key of ['city', 'region', 'country', 'timezone']) if (typeof where[key] === 'string') approximate[key] = where[key];
    options.user_location = { type: 'approximate', approximate };
  }
  for (const key of ['allowed_domains', 'blocked_domains', 'max_uses']) if (given(tool[key])) dropped.add(`tools[${type}].${key}`);
  out.web_search_options = options;
}

/**
 * Anthropic's tools → Chat function tools. Its own tools (server tools such
 * as code execution or web fetch, and schema-less ones such as bash or the
 * text editor) have no Chat form and are dropped, named `tools[<type>]`; web
 * search becomes `web_search_options`.
 */
function chatTools(tools: unknown, out: Json, dropped: Dropped): Json[] {
  if (!Array.isArray(tools)) throw invalidInput('tools: must be an array.');
  const list: Json[] = [];
  tools.forEach((t, i) => {
    const field = `tools.${i}`;
    if (!isObject(t)) throw invalidInput(`${field}: must be a tool object.`);
    if (given(t.cache_control)) dropped.add('cache_control');
    if (given(t.type) && t.type !== 'custom') {
      const type = String(t.type);
      if (type.startsWith('web_search_')) webSearch(t, type, out, dropped);
      else dropped.add(`tools[${type}]`);
      return;
    }
    if (typeof t.name !== 'string') throw invalidInput(`${field}.name: must be a string.`);
    const fn: Json = { name: t.name, parameters: t.input_schema ?? { type: 'object' } };
    if (given(t.description)) fn.description = t.description;
    if (given(t.strict)) fn.strict = t.strict;
    for (const key of Object.keys(t)) if (!TOOL_IGNORED.has(key) && given(t[key])) dropped.add(`tools.${key}`);
    list.push({ type: 'function', function: fn });
  });
  return list;
}

/** The names of the Anthropic-defined tools chatTools dropped: a choice naming one is dropped with them. */
function droppedToolNames(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (Array.isArray(tools))
    for (const t of tools) if (isObject(t) && given(t.type) && t.type !== 'custom' && typeof t.name === 'string') names.add(t.name);
  return names;
}

function chatToolChoice(choice: unknown, out: Json, dropped: Dropped, droppedTools: Set<string>): void {
  if (!isObject(choice)) throw invalidInput('tool_choice: must be an object.');
  const names = new Set(Array.isArray(out.tools) ? out.tools.map((t: Json) => (t.function as Json).name) : []);
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'tool':
      if (typeof choice.name !== 'string') throw invalidInput('tool_choice.name: must be a string.');
      // A tool dropped above (a server tool) cannot be forced: the model chooses among those left.
      if (names.has(choice.name) || !droppedTools.has(choice.name)) out.tool_choice = { type: 'function', function: { name: choice.name } };
      else dropped.add('tool_choice');
      break;
    default:
      throw invalidInput('tool_choice.type: must be auto, any, tool or none.');
  }
  // Without tools a tool choice changes nothing, and the Chat API refuses one given alone.
  if (names.size === 0 && out.tool_choice !== undefined) {
    if (out.tool_choice === 'required') dropped.add('tool_choice');
    delete out.tool_choice;
  }
  // The Chat API accepts parallel_tool_calls only beside tools.
  if (choice.disable_parallel_tool_use === true && names.size) out.parallel_tool_calls = false;
}

/** `output_config.format` → `response_format`; `effort` is read with thinking; anything else is dropped by name. */
function outputConfig(config: unknown, out: Json, dropped: Dropped): void {
  if (!isObject(config)) throw invalidInput('output_config: must be an object.');
  for (const key of Object.keys(config)) {
    const v = config[key];
    if (!given(v) || key === 'effort') continue;
    if (key !== 'format') {
      dropped.add(`output_config.${key}`);
      continue;
    }
    if (!isObject(v) || v.type !== 'json_schema' || !isObject(v.schema))
      throw invalidInput('output_config.format: must be a json_schema format with a schema.');
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: v.schema, strict: true } };
  }
}

/**
 * `thinking` and `output_config.effort` → `reasoning_effort`, when the model
 * entry says its provider takes one (reasoning.ts has the scale). An explicit
 * effort wins over a budget; adaptive thinking without one leaves the level
 * to the provider's default. Returns whether the control reached the
 * provider; on a model without reasoning both are dropped by name (disabled
 * thinking asks for nothing and is never named).
 */
function reasoningEffort(body: Json, reasoning: boolean, out: Json, dropped: Dropped): boolean {
  const thinking = body.thinking;
  const effort = isObject(body.output_config) ? body.output_config.effort : undefined;
  if (given(thinking) && !isObject(thinking)) throw invalidInput('thinking: must be an object.');
  const asked = isObject(thinking) && thinking.type !== 'disabled';
  if (!reasoning) {
    if (asked) dropped.add('thinking');
    if (given(effort)) dropped.add('output_config.effort');
    return false;
  }
  let level: string | undefined;
  if (isObject(thinking) && thinking.type === 'enabled') {
    if (typeof thinking.budget_tokens !== 'number') throw invalidInput('thinking.budget_tokens: must be a number.');
    level = effortOfBudget(thinking.budget_tokens);
  } else if (asked && thinking.type !== 'adaptive') dropped.add('thinking');
  if (given(effort)) {
    const chat = chatEffortOf(effort);
    if (chat) level = chat;
    else dropped.add('output_config.effort');
  }
  if (level) out.reasoning_effort = level;
  return level !== undefined || (isObject(thinking) && thinking.type === 'adaptive');
}

/** `metadata.user_id` → `user`, held to OpenAI's 64 characters (user-id.ts); any other metadata is dropped by name. */
function chatUser(metadata: unknown, out: Json, dropped: Dropped): void {
  if (!isObject(metadata)) throw invalidInput('metadata: must be an object.');
  for (const key of Object.keys(metadata)) {
    const v = metadata[key];
    if (!given(v)) continue;
    if (key !== 'user_id') dropped.add(`metadata.${key}`);
    else if (typeof v !== 'string') throw invalidInput('metadata.user_id: must be a string.');
    else out.user = cappedUserId(v, CHAT_USER_MAX);
  }
}

/** The `anthropic-beta` features whose meaning the translation loses, named `anthropic-beta:<feature>`. */
function dropBetas(betas: readonly string[], reasoningKept: boolean, dropped: Dropped): void {
  // A Responses provider is reached through Chat, so Chat's column decides (betas.ts).
  for (const beta of betasFor('chat', betas, reasoningKept).dropped) dropped.add(`anthropic-beta:${beta}`);
}

/**
 * The Messages request → a Chat Completions request and what it dropped.
 * `max_tokens` stays `max_tokens` rather than becoming
 * `max_completion_tokens`: every OpenAI-compatible server (vLLM, Ollama,
 * llama.cpp, Groq, Together, Azure's older API versions) knows it, while many
 * know nothing of the newer name.
 */
export function chatRequest(call: ParsedCall, model: ModelConfig, options: TranslateOptions = {}): Translation {
  const body = call.body;
  const dropped: Dropped = new Set();
  // Capped at the model's own ceiling, which the hold assumes: a client written for one model
  // family asks for that family's limits (Claude Code's 32k), which another family's provider refuses.
  const maxTokens = call.maxTokens === undefined ? undefined : Math.min(call.maxTokens, model.max_output_tokens);
  const out: Json = { model: model.upstream_model, messages: chatMessages(body, dropped), max_tokens: maxTokens };
  for (const key of Object.keys(body)) {
    const v = body[key];
    if (!given(v)) continue;
    if (!TRANSLATED.has(key)) {
      // Cache hints, context management, top_k, server-side containers and MCP servers, routing hints
      // and fields newer than this code: the provider cannot honour them, the client learns which.
      dropped.add(key);
      continue;
    }
    switch (key) {
      case 'stream':
        if (v === true) {
          out.stream = true;
          // The proxy bills from the provider's usage, which a Chat stream sends only when asked.
          out.stream_options = { include_usage: true };
        }
        break;
      case 'temperature':
      case 'top_p':
        out[key] = v;
        break;
      case 'stop_sequences':
        if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw invalidInput('stop_sequences: must be an array of strings.');
        // Dropping the extra ones would let the answer run past where the client wants it to stop.
        if (v.length > MAX_STOP_SEQUENCES) {
          throw refuse('stop_sequences', `at most ${MAX_STOP_SEQUENCES} stop sequences fit a Chat Completions call (${v.length} given).`);
        }
        if (v.length) out.stop = v;
        break;
      case 'metadata':
        chatUser(v, out, dropped);
        break;
      case 'tools': {
        // The Chat API refuses an empty tools list; no tools and an empty list mean the same.
        const tools = chatTools(v, out, dropped);
        if (tools.length) out.tools = tools;
        break;
      }
      case 'output_config':
        outputConfig(v, out, dropped);
        break;
      default:
        // model, messages, system, max_tokens: read above; thinking and tool_choice: read below.
        break;
    }
  }
  const reasoningKept = reasoningEffort(body, options.reasoning === true, out, dropped);
  if (given(body.tool_choice)) chatToolChoice(body.tool_choice, out, dropped, droppedToolNames(body.tools));
  dropBetas(options.betas ?? [], reasoningKept, dropped);
  return { request: out, dropped: [...dropped] };
}

export const messagesToChat: Translator = {
  translate: chatRequest,
  request: (call, model) => chatRequest(call, model, { reasoning: model.reasoning }).request,
  answer: (call) => createChatAnswerTranslator(call),
};
