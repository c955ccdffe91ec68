import { invalidInput } from '../../../shared/errors.js';
import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { createChatAnswerTranslator } from './answer-from-chat.js';
import type { Translator } from '../types.js';
import { isObject } from '../../../shared/json.js';

/**
 * A Messages (Anthropic) client calling a provider that speaks only Chat
 * Completions: the request goes Messages → Chat here, the answer comes back
 * in messages-to-chat-answer.ts. What has no Chat counterpart and would
 * change the answer is refused (400 naming the field); what does not change
 * the answer (cache hints, routing hints) is dropped. docs/proxy.md lists both.
 */

type Json = Record<string, unknown>;

/** The Chat Completions API takes at most this many stop sequences. */
const MAX_STOP_SEQUENCES = 4;

function refuse(field: string, why: string): Error {
  return invalidInput(`${field}: ${why} This model's provider speaks only Chat Completions, so the call cannot be translated.`);
}

/** Top-level fields dropped because they never change the answer's content. */
const DROPPED = new Set(['cache_control', 'service_tier', 'inference_geo', 'speed', 'diagnostics', 'user_profile_id', 'workspace_id']);
/** Top-level fields refused by name: the answer would differ without them. */
const REFUSED: Record<string, string> = {
  top_k: 'Chat Completions has no top-k sampling.',
  container: 'Chat Completions has no code-execution containers.',
  mcp_servers: 'Chat Completions has no MCP servers.',
  context_management: 'Chat Completions has no context management.',
};
/** Per-tool fields dropped (hints to Anthropic's own tool runner or cache). */
const TOOL_DROPPED = new Set(['cache_control', 'defer_loading', 'eager_input_streaming', 'allowed_callers', 'type']);

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
function toolResultText(block: Json, field: string, images: Json[]): string {
  const content = block.content;
  let out = '';
  if (typeof content === 'string') out = content;
  else if (Array.isArray(content)) {
    for (const { block: part, at } of blocksOf(content, `${field}.content`)) {
      if (part.type === 'text') out += text(part, at);
      else if (part.type === 'image') images.push(imagePart(part, at));
      else throw noChatForm(part, at);
    }
  } else if (content !== undefined) throw invalidInput(`${field}.content: must be a string or an array of blocks.`);
  // Chat has no error flag on a tool message: say it in the content so the model still knows.
  return block.is_error === true ? `Error: ${out}` : out;
}

/** Each block of a content array with its field path (`messages.2.content.0`). */
function blocksOf(content: unknown, field: string): { block: Json; at: string }[] {
  if (!Array.isArray(content)) throw invalidInput(`${field}: must be a string or an array of content blocks.`);
  return content.map((block, i) => {
    if (!isObject(block)) throw invalidInput(`${field}.${i}: must be a content block object.`);
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
function userMessages(content: unknown, field: string, out: Json[]): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const parts: Json[] = [];
  for (const { block, at } of blocksOf(content, field)) {
    if (block.type === 'text') parts.push(textPart(block, at));
    else if (block.type === 'image') parts.push(imagePart(block, at));
    else if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string') throw invalidInput(`${at}.tool_use_id: must be a string.`);
      out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolResultText(block, at, parts) });
    } else throw noChatForm(block, at);
  }
  if (parts.length) out.push({ role: 'user', content: parts });
}

/** One assistant turn → text (string or text parts) and its tool_use blocks as `tool_calls`, ids kept. */
function assistantMessage(content: unknown, field: string): Json {
  if (typeof content === 'string') return { role: 'assistant', content };
  const parts: Json[] = [];
  const calls: Json[] = [];
  for (const { block, at } of blocksOf(content, field)) {
    if (block.type === 'text') parts.push(textPart(block, at));
    else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalidInput(`${at}: a tool_use block needs an id and a name.`);
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    } else if (block.type !== 'thinking' && block.type !== 'redacted_thinking') throw noChatForm(block, at);
    // Earlier turns' reasoning is left out: Anthropic's own API leaves it out of later turns' context too.
  }
  // Chat wants content or tool calls on an assistant message: an empty turn (say, reasoning only) is empty text.
  const empty = calls.length ? null : '';
  const message: Json = { role: 'assistant', content: parts.length === 0 ? empty : parts.length === 1 ? parts[0]!.text : parts };
  if (calls.length) message.tool_calls = calls;
  return message;
}

function systemMessage(system: unknown): Json | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return { role: 'system', content: system };
  const parts = blocksOf(system, 'system').map(({ block, at }) => {
    if (block.type !== 'text') throw invalidInput(`${at}.type: system blocks must be text.`);
    return textPart(block, at);
  });
  return { role: 'system', content: parts };
}

function chatMessages(body: Json): Json[] {
  const out: Json[] = [];
  const system = systemMessage(body.system);
  if (system) out.push(system);
  const messages = body.messages as unknown[];
  messages.forEach((m, i) => {
    const field = `messages.${i}`;
    if (!isObject(m)) throw invalidInput(`${field}: must be a message object.`);
    if (m.role === 'user') userMessages(m.content, `${field}.content`, out);
    else if (m.role === 'assistant') {
      // A last assistant turn is a prefill: the answer continues it. A Chat model would start afresh instead.
      if (i === messages.length - 1) throw refuse(field, 'a final assistant turn (a prefill the answer continues) has no Chat Completions form.');
      out.push(assistantMessage(m.content, `${field}.content`));
    } else throw invalidInput(`${field}.role: must be "user" or "assistant".`);
  });
  return out;
}

function chatTools(tools: unknown): Json[] {
  if (!Array.isArray(tools)) throw invalidInput('tools: must be an array.');
  return tools.map((t, i) => {
    const field = `tools.${i}`;
    if (!isObject(t)) throw invalidInput(`${field}: must be a tool object.`);
    // Anthropic's server tools (web search, code execution, bash, …) run inside Anthropic's API.
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      throw refuse(`${field}.type`, `the ${JSON.stringify(t.type)} tool runs only on Anthropic's own API.`);
    }
    if (typeof t.name !== 'string') throw invalidInput(`${field}.name: must be a string.`);
    const fn: Json = { name: t.name, parameters: t.input_schema ?? { type: 'object' } };
    for (const key of Object.keys(t)) {
      if (key === 'name' || key === 'input_schema' || TOOL_DROPPED.has(key)) continue;
      if (key === 'description' || key === 'strict') fn[key] = t[key];
      else throw refuse(`${field}.${key}`, 'it has no Chat Completions counterpart.');
    }
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: unknown, out: Json): void {
  if (!isObject(choice)) throw invalidInput('tool_choice: must be an object.');
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
      out.tool_choice = { type: 'function', function: { name: choice.name } };
      break;
    default:
      throw invalidInput('tool_choice.type: must be auto, any, tool or none.');
  }
  // The Chat API accepts parallel_tool_calls only beside tools.
  if (choice.disable_parallel_tool_use === true && out.tools !== undefined) out.parallel_tool_calls = false;
}

function outputConfig(config: unknown, out: Json): void {
  if (!isObject(config)) throw invalidInput('output_config: must be an object.');
  for (const key of Object.keys(config)) {
    const v = config[key];
    if (v === undefined || v === null) continue;
    if (key !== 'format') throw refuse(`output_config.${key}`, 'it has no Chat Completions counterpart.');
    if (!isObject(v) || v.type !== 'json_schema' || !isObject(v.schema))
      throw invalidInput('output_config.format: must be a json_schema format with a schema.');
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: v.schema, strict: true } };
  }
}

/**
 * The Messages request → a Chat Completions request. `max_tokens` stays
 * `max_tokens` rather than becoming `max_completion_tokens`: every
 * OpenAI-compatible server (vLLM, Ollama, llama.cpp, Groq, Together, Azure's
 * older API versions) knows it, while many know nothing of the newer name.
 */
export function chatRequest(call: ParsedCall, model: ModelConfig): Json {
  const body = call.body;
  // Capped at the model's own ceiling, which the hold already assumes: a client written for one model
  // family asks for that family's limits (Claude Code's 32k), which another family's provider refuses.
  const maxTokens = call.maxTokens === undefined ? undefined : Math.min(call.maxTokens, model.max_output_tokens);
  const out: Json = { model: model.upstream_model, messages: chatMessages(body), max_tokens: maxTokens };
  for (const key of Object.keys(body)) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    switch (key) {
      case 'model':
      case 'messages':
      case 'system':
      case 'max_tokens':
      case 'tool_choice':
        break;
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
        if (v.length > MAX_STOP_SEQUENCES) {
          throw refuse('stop_sequences', `at most ${MAX_STOP_SEQUENCES} stop sequences fit a Chat Completions call (${v.length} given).`);
        }
        if (v.length) out.stop = v;
        break;
      case 'metadata':
        // Only user_id has a Chat counterpart; other metadata never reaches the model.
        if (isObject(v) && typeof v.user_id === 'string') out.user = v.user_id;
        break;
      case 'tools':
        // The Chat API refuses an empty tools list; no tools and an empty list mean the same.
        if (!Array.isArray(v) || v.length) out.tools = chatTools(v);
        break;
      case 'thinking':
        if (!isObject(v) || v.type !== 'disabled') throw refuse('thinking', 'Chat Completions has no extended thinking.');
        break;
      case 'output_config':
        outputConfig(v, out);
        break;
      default:
        if (DROPPED.has(key)) break;
        throw refuse(key, REFUSED[key] ?? 'it has no Chat Completions counterpart.');
    }
  }
  // Without tools a tool choice changes nothing, and the Chat API refuses one given alone.
  if (body.tool_choice !== undefined && body.tool_choice !== null) chatToolChoice(body.tool_choice, out);
  if (out.tools === undefined) delete out.tool_choice;
  return out;
}

export const messagesToChat: Translator = {
  request: chatRequest,
  answer: (call) => createChatAnswerTranslator(call),
};
