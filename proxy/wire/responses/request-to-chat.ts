import { isObject } from '../../../shared/json.js';
import { invalidInput } from '../../../shared/errors.js';
import { type Json } from './json.js';
import { itemType, type ResponsesRequest } from './schema.js';
import { DropList, type Mapped, type TargetAbilities } from './options.js';
import { toolNames, type ToolNames } from './tool-names.js';

/**
 * A checked Responses request → the Chat Completions request that asks the
 * same of the model. Conversation items become messages (an assistant's
 * text and the calls that follow it become one assistant message, as Chat
 * says it); tools become function tools (namespaces flattened, free-form
 * tools given one string parameter). What Chat cannot carry is dropped and
 * named. Refused (400): stored state the proxy does not keep
 * (`previous_response_id`, `conversation`, `background`) and log
 * probabilities, since answering without them would mislead the client.
 */

/** Top-level fields Chat has no use for; dropped (and named) when set to something other than their default. */
const DROPPED_UNLESS: Record<string, (v: unknown) => boolean> = {
  include: (v) => Array.isArray(v) && v.length === 0,
  store: (v) => v === false,
  prompt_cache_key: () => false,
  client_metadata: () => false,
  metadata: (v) => isObject(v) && Object.keys(v).length === 0,
  safety_identifier: () => false,
  truncation: (v) => v === 'disabled',
  service_tier: (v) => v === 'auto' || v === 'default',
  max_tool_calls: () => false,
  stream_options: () => true,
  top_logprobs: (v) => v === 0,
};

/** Fields read below. */
const READ = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'text',
  'reasoning',
  'stream',
  'user',
  'previous_response_id',
  'conversation',
  'background',
]);

const TOOL_OUTPUT_TEXT = new Set(['input_text', 'output_text']);

function refuseStored(request: ResponsesRequest): void {
  if (typeof request.previous_response_id === 'string' && request.previous_response_id !== '') {
    throw invalidInput(
      'previous_response_id: this model is served by a provider that does not keep responses; send the whole conversation in `input` (with `store: false`) instead.',
      'unsupported_parameter',
    );
  }
  const extra = request as Json;
  if (extra.conversation !== undefined && extra.conversation !== null) {
    throw invalidInput(
      'conversation: this model is served by a provider that does not keep conversations; send the whole conversation in `input`.',
      'unsupported_parameter',
    );
  }
  if (request.background === true) {
    throw invalidInput(
      'background: background responses are not available for this model; call without it (streaming if the answer is long).',
      'unsupported_parameter',
    );
  }
  if (typeof request.top_logprobs === 'number' && request.top_logprobs > 0) {
    throw invalidInput('top_logprobs: log probabilities are not available for this model.', 'unsupported_parameter');
  }
}

/** A user/system message's parts → Chat content parts; images by URL only. */
function userParts(parts: readonly unknown[], at: string, drop: DropList): Json[] {
  const out: Json[] = [];
  for (const part of parts) {
    if (!isObject(part)) continue;
    if (part.type === 'input_text' || part.type === 'output_text') out.push({ type: 'text', text: part.text });
    else if (part.type === 'input_image' && typeof part.image_url === 'string') {
      out.push({ type: 'image_url', image_url: part.detail ? { url: part.image_url, detail: part.detail } : { url: part.image_url } });
    } else drop.add(`${at}[${String(part.type === 'input_image' ? 'input_image.file_id' : part.type)}]`);
  }
  return out;
}

/** Text parts (the only kind system, developer and tool messages take) joined, others dropped. */
function textOf(content: unknown, at: string, drop: DropList): string {
  if (typeof content === 'string') return content;
  let text = '';
  if (Array.isArray(content)) {
    for (const part of content) {
      if (isObject(part) && TOOL_OUTPUT_TEXT.has(part.type as string) && typeof part.text === 'string') text += part.text;
      else if (isObject(part)) drop.add(`${at}[${String(part.type)}]`);
    }
  }
  return text;
}

/**
 * Builds Chat messages in order; an assistant's text and the calls right after it share one message.
 * A tool output Chat cannot carry (no `call_id`, or a call not in the conversation: Chat providers
 * refuse a tool message that answers no call) becomes text in a user message, named as dropped,
 * placed after the tool messages that follow, since nothing may come between a call and its outputs.
 */
class Conversation {
  readonly messages: Json[] = [];
  private assistant: Json | undefined;
  private readonly callIds = new Set<string>();
  private orphans: string[] = [];

  constructor(
    private readonly names: ToolNames,
    private readonly drop: DropList,
  ) {}

  push(message: Json): void {
    if (message.role !== 'tool') this.flushOrphans();
    this.messages.push(message);
    this.assistant = message.role === 'assistant' ? message : undefined;
  }

  item(item: Json): void {
    const type = itemType(item);
    switch (type) {
      case 'message':
        return this.message(item);
      case 'function_call':
        return this.call(
          item.call_id as string,
          this.names.flat(item.name as string, item.namespace as string | undefined),
          item.arguments as string,
        );
      case 'custom_tool_call':
        return this.call(item.call_id as string, this.names.flat(item.name as string), JSON.stringify({ input: item.input }));
      case 'function_call_output':
      case 'custom_tool_call_output':
        return this.output(item, type);
      default:
        // Reasoning from earlier turns (often encrypted for one provider), hosted tool calls, references to stored items.
        this.drop.add(`input[${type}]`);
    }
  }

  private output(item: Json, type: string): void {
    const content = textOf(item.output, `input[${type}].output`, this.drop);
    if (typeof item.call_id === 'string' && this.callIds.has(item.call_id)) {
      this.push({ role: 'tool', tool_call_id: item.call_id, content });
      return;
    }
    this.drop.add(`input[${type}].call_id`);
    const name = typeof item.name === 'string' ? (typeof item.namespace === 'string' ? `${item.namespace}.${item.name}` : item.name) : 'a tool';
    this.orphans.push(`Output of ${name}:\n${content}`);
  }

  /** The outputs that answer no call, as one user message; also called once the last item is in. */
  flushOrphans(): void {
    if (!this.orphans.length) return;
    const text = this.orphans.join('\n\n');
    this.orphans = [];
    this.push({ role: 'user', content: text });
  }

  private message(item: Json): void {
    const role = item.role as string;
    const content = item.content;
    if (role === 'assistant') {
      let text = '';
      let refusal = '';
      if (typeof content === 'string') text = content;
      else if (Array.isArray(content)) {
        for (const part of content) {
          if (!isObject(part)) continue;
          if ((part.type === 'output_text' || part.type === 'input_text') && typeof part.text === 'string') text += part.text;
          else if (part.type === 'refusal' && typeof part.refusal === 'string') refusal += part.refusal;
          else this.drop.add(`input[message].content[${String(part.type)}]`);
        }
      }
      this.push({ role: 'assistant', content: text, ...(refusal ? { refusal } : {}) });
      return;
    }
    if (role === 'user') {
      this.push({ role, content: typeof content === 'string' ? content : userParts(content as unknown[], 'input[message].content', this.drop) });
      return;
    }
    this.push({ role, content: textOf(content, `input[message].content`, this.drop) });
  }

  private call(id: string, name: string, args: string): void {
    this.callIds.add(id);
    let target = this.assistant;
    if (!target) {
      target = { role: 'assistant', content: null };
      this.push(target);
    }
    const calls = Array.isArray(target.tool_calls) ? (target.tool_calls as Json[]) : (target.tool_calls = []);
    calls.push({ id, type: 'function', function: { name, arguments: args } });
    if (target.content === '') target.content = null;
  }
}

function functionTool(name: string, def: Json): Json {
  const fn: Json = { name };
  if (typeof def.description === 'string') fn.description = def.description;
  if (isObject(def.parameters)) fn.parameters = def.parameters;
  if (typeof def.strict === 'boolean') fn.strict = def.strict;
  return { type: 'function', function: fn };
}

/** A free-form tool as a function: the model writes its text into one string argument. */
function customTool(name: string, def: Json, drop: DropList): Json {
  if (isObject(def.format) && def.format.type !== 'text') drop.add('tools[custom].format');
  const description = typeof def.description === 'string' ? def.description : undefined;
  return {
    type: 'function',
    function: {
      name,
      ...(description === undefined ? {} : { description }),
      parameters: { type: 'object', properties: { input: { type: 'string', description: 'The raw text input of this tool.' } }, required: ['input'] },
    },
  };
}

function webSearchOptions(tool: Json): Json {
  const options: Json = {};
  if (typeof tool.search_context_size === 'string') options.search_context_size = tool.search_context_size;
  if (isObject(tool.user_location)) {
    const { type: _type, ...approximate } = tool.user_location;
    options.user_location = { type: 'approximate', approximate };
  }
  return options;
}

function tools(request: ResponsesRequest, names: ToolNames, abilities: TargetAbilities, out: Json, drop: DropList): void {
  const chatTools: Json[] = [];
  for (const tool of request.tools ?? []) {
    if (!isObject(tool)) continue;
    const type = tool.type as string;
    if (type === 'function') chatTools.push(functionTool(names.flat(tool.name as string), tool));
    else if (type === 'custom') chatTools.push(customTool(names.flat(tool.name as string), tool, drop));
    else if (type === 'namespace') {
      for (const member of tool.tools as Json[]) {
        const flat = names.flat(member.name as string, tool.name as string);
        chatTools.push(member.type === 'custom' ? customTool(flat, member, drop) : functionTool(flat, member));
      }
    } else if (type.startsWith('web_search') && abilities.webSearch) out.web_search_options = webSearchOptions(tool);
    else drop.add(`tools[${type}]`);
  }
  if (chatTools.length) out.tools = chatTools;
  const choice = request.tool_choice;
  if (choice !== undefined && (chatTools.length || typeof choice === 'string')) {
    if (typeof choice === 'string') {
      if (chatTools.length || choice === 'none') out.tool_choice = choice;
    } else if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') {
      out.tool_choice = { type: 'function', function: { name: names.flat(choice.name) } };
    } else if (choice.type === 'allowed_tools') {
      out.tool_choice = choice.mode;
      drop.add('tool_choice.allowed_tools');
    } else drop.add(`tool_choice[${String(choice.type)}]`);
  }
  if (chatTools.length && typeof request.parallel_tool_calls === 'boolean') out.parallel_tool_calls = request.parallel_tool_calls;
}

function textFormat(request: ResponsesRequest, out: Json, drop: DropList): void {
  const text = request.text;
  if (!isObject(text)) return;
  const format = text.format;
  if (isObject(format) && format.type === 'json_schema') {
    const spec: Json = { name: format.name, schema: format.schema };
    if (typeof format.description === 'string') spec.description = format.description;
    if (typeof format.strict === 'boolean') spec.strict = format.strict;
    out.response_format = { type: 'json_schema', json_schema: spec };
  } else if (isObject(format) && format.type === 'json_object') out.response_format = { type: 'json_object' };
  if (text.verbosity !== undefined && text.verbosity !== null) drop.add('text.verbosity');
}

function reasoning(request: ResponsesRequest, abilities: TargetAbilities, out: Json, drop: DropList): void {
  const r = request.reasoning;
  if (!isObject(r)) return;
  if (typeof r.effort === 'string') {
    if (abilities.reasoning) out.reasoning_effort = r.effort;
    else drop.add('reasoning.effort');
  }
  if (r.summary !== undefined && r.summary !== null) drop.add('reasoning.summary');
}

/** `model` is the provider's model name; the caller set it from the alias. */
export function requestToChat(request: ResponsesRequest, model: string, abilities: TargetAbilities): Mapped {
  refuseStored(request);
  const drop = new DropList();
  const names = toolNames(request.tools);
  const conversation = new Conversation(names, drop);
  if (typeof request.instructions === 'string' && request.instructions !== '') conversation.push({ role: 'system', content: request.instructions });
  if (typeof request.input === 'string') conversation.push({ role: 'user', content: request.input });
  else for (const item of request.input ?? []) conversation.item(item as Json);
  conversation.flushOrphans();
  const out: Json = { model, messages: conversation.messages };
  tools(request, names, abilities, out, drop);
  if (typeof request.max_output_tokens === 'number') out.max_completion_tokens = request.max_output_tokens;
  if (typeof request.temperature === 'number') out.temperature = request.temperature;
  if (typeof request.top_p === 'number') out.top_p = request.top_p;
  if (typeof request.user === 'string') out.user = request.user;
  textFormat(request, out, drop);
  reasoning(request, abilities, out, drop);
  if (request.stream === true) {
    out.stream = true;
    // Billing reads the provider's usage chunk; the Responses client gets usage in response.completed.
    out.stream_options = { include_usage: true };
  }
  for (const field in request) {
    if (READ.has(field)) continue;
    const v = (request as Json)[field];
    if (v === undefined || v === null) continue;
    const neutral = DROPPED_UNLESS[field];
    if (!neutral?.(v)) drop.add(field);
  }
  return { request: out, dropped: drop.list() };
}
