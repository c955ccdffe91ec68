import { invalidInput, type AppError } from '../../../shared/errors.js';
import { isObject, type JsonObject } from '../../../shared/json.js';
import {
  parseConverseRequest,
  type ConverseBlock,
  type ConverseImage,
  type ConverseMessage,
  type ConverseRequest,
  type ConverseToolConfig,
} from './converse-schema.js';

/**
 * A Converse call from a client of the workspace's Bedrock route
 * (`bedrock/model/{id}/converse`, `/converse-stream`) as the Chat
 * Completions call it stands for: the pivot every provider format is
 * reached from. The reverse of converse-request.ts (a Chat call sent to a
 * Bedrock provider as Converse). What Chat cannot carry is named as dropped
 * when it is a hint (cache points, request metadata, latency and tier
 * choices, model-specific fields), and refused with a 400 naming it when
 * losing it would change the answer the client relies on (a guardrail, an
 * S3 image, a document or video).
 */

/** The Chat call, and what the client asked for that no provider behind the pivot will see. */
interface ChatFromConverse {
  body: Buffer;
  dropped: string[];
}

type Dropped = Set<string>;

/** Top-level fields translated below; any other is dropped by name, except those refused. */
const TRANSLATED = new Set(['messages', 'system', 'inferenceConfig', 'toolConfig']);
/** Top-level fields whose loss would change the answer. */
const REFUSED: Record<string, string> = {
  guardrailConfig: 'a guardrail is applied by Bedrock alone, and this call is served through a translation that cannot apply it.',
};

function refuse(field: string, why: string): AppError {
  return invalidInput(`${field}: ${why} Tollgate translates Converse calls through Chat Completions, which has no form for it.`);
}

function imagePart(image: ConverseImage, at: string): JsonObject {
  if (image.source.bytes === undefined) throw refuse(`${at}.source`, 'only an image given as bytes can be sent on, not an S3 location.');
  return { type: 'image_url', image_url: { url: `data:image/${image.format};base64,${image.source.bytes}` } };
}

/** The kind of a block Chat has no form for, for a refusal's message. */
function kindOf(block: object): string {
  return Object.keys(block)[0] ?? 'empty';
}

/** A tool result's text for its `tool` message; its images go on to the user message after the results (a `tool` message holds text only). */
function toolResultText(result: NonNullable<ConverseBlock['toolResult']>, at: string, images: JsonObject[]): string {
  let out = '';
  result.content.forEach((part, i) => {
    if (part.text !== undefined) out += part.text;
    else if (part.json !== undefined) out += JSON.stringify(part.json);
    else if (part.image !== undefined) images.push(imagePart(part.image, `${at}.content[${i}].image`));
    else throw refuse(`${at}.content[${i}]`, `a ${JSON.stringify(kindOf(part))} tool result has no Chat Completions form.`);
  });
  // Chat has no error flag on a tool message: said in the content, so the model still knows.
  return result.status === 'error' ? `Error: ${out}` : out;
}

/** One user turn → its tool results as `tool` messages (first, in order), then the rest as one user message. */
function userMessages(m: ConverseMessage, at: string, out: JsonObject[], dropped: Dropped): void {
  const parts: JsonObject[] = [];
  m.content.forEach((block, i) => {
    const where = `${at}.content[${i}]`;
    if (block.text !== undefined) parts.push({ type: 'text', text: block.text });
    else if (block.image !== undefined) parts.push(imagePart(block.image, `${where}.image`));
    else if (block.toolResult !== undefined)
      out.push({ role: 'tool', tool_call_id: block.toolResult.toolUseId, content: toolResultText(block.toolResult, `${where}.toolResult`, parts) });
    else if (block.cachePoint !== undefined) dropped.add('cachePoint');
    else throw refuse(where, `a ${JSON.stringify(kindOf(block))} block has no Chat Completions form.`);
  });
  if (parts.length) out.push({ role: 'user', content: parts });
}

/** One assistant turn → its text and its tool uses as `tool_calls`, ids kept; its reasoning, which Chat cannot be given back, dropped. */
function assistantMessage(m: ConverseMessage, at: string, dropped: Dropped): JsonObject {
  let text = '';
  const calls: JsonObject[] = [];
  m.content.forEach((block, i) => {
    if (block.text !== undefined) text += block.text;
    else if (block.toolUse !== undefined) {
      const { toolUseId, name, input } = block.toolUse;
      calls.push({ id: toolUseId, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
    } else if (block.cachePoint !== undefined) dropped.add('cachePoint');
    else if (block.reasoningContent !== undefined) dropped.add('messages[reasoningContent]');
    else throw refuse(`${at}.content[${i}]`, `a ${JSON.stringify(kindOf(block))} block has no Chat Completions form.`);
  });
  const message: JsonObject = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) message.tool_calls = calls;
  return message;
}

/** Each system text block → one system message (converse-request.ts makes one block of each again). */
function systemMessages(system: ConverseRequest['system'], dropped: Dropped): JsonObject[] {
  const out: JsonObject[] = [];
  (system ?? []).forEach((block, i) => {
    if (block.text !== undefined) out.push({ role: 'system', content: block.text });
    else if (block.cachePoint !== undefined) dropped.add('cachePoint');
    else throw refuse(`system[${i}]`, `a ${JSON.stringify(kindOf(block))} block has no Chat Completions form.`);
  });
  return out;
}

function chatMessages(request: ConverseRequest, dropped: Dropped): JsonObject[] {
  const out = systemMessages(request.system, dropped);
  request.messages.forEach((m, i) => {
    if (m.role === 'user') userMessages(m, `messages[${i}]`, out, dropped);
    else out.push(assistantMessage(m, `messages[${i}]`, dropped));
  });
  return out;
}

function toolChoiceOf(choice: ConverseToolConfig['toolChoice']): unknown {
  if (choice?.tool !== undefined) return { type: 'function', function: { name: choice.tool.name } };
  if (choice?.any !== undefined) return 'required';
  return choice?.auto !== undefined ? 'auto' : undefined;
}

/** `toolConfig` → Chat's `tools` and `tool_choice`; a cache point among the tools is dropped. */
function addTools(config: ConverseToolConfig, into: JsonObject, dropped: Dropped): void {
  const tools: JsonObject[] = [];
  config.tools.forEach((tool, i) => {
    if (tool.toolSpec !== undefined) {
      const { name, description, inputSchema } = tool.toolSpec;
      const fn: JsonObject = { name, parameters: inputSchema.json };
      if (description !== undefined) fn.description = description;
      tools.push({ type: 'function', function: fn });
    } else if (tool.cachePoint !== undefined) dropped.add('cachePoint');
    else throw refuse(`toolConfig.tools[${i}]`, 'only a toolSpec tool has a Chat Completions form.');
  });
  if (tools.length) into.tools = tools;
  const choice = toolChoiceOf(config.toolChoice);
  if (tools.length && choice !== undefined) into.tool_choice = choice;
}

function addInference(config: ConverseRequest['inferenceConfig'], into: JsonObject): void {
  if (config?.maxTokens !== undefined) into.max_tokens = config.maxTokens;
  if (config?.temperature !== undefined) into.temperature = config.temperature;
  if (config?.topP !== undefined) into.top_p = config.topP;
  if (config?.stopSequences?.length) into.stop = config.stopSequences;
}

/** The Chat body (as an object) for a Converse body; the model is the path's id, streaming the operation's. */
export function chatRequestFromConverse(body: unknown, modelId: string, stream: boolean): { request: JsonObject; dropped: string[] } {
  if (!isObject(body)) throw invalidInput('The request body must be a JSON object.');
  for (const field of Object.keys(REFUSED)) if (body[field] !== undefined) throw refuse(field, REFUSED[field]!);
  const request = parseConverseRequest(body);
  const dropped: Dropped = new Set(Object.keys(body).filter((k) => !TRANSLATED.has(k)));
  const chat: JsonObject = { model: modelId, messages: chatMessages(request, dropped), stream };
  // The metadata event's usage comes from Chat's usage chunk, which a Chat provider sends only when asked.
  if (stream) chat.stream_options = { include_usage: true };
  addInference(request.inferenceConfig, chat);
  if (request.toolConfig) addTools(request.toolConfig, chat, dropped);
  return { request: chat, dropped: [...dropped] };
}

/** A Converse body's bytes → the Chat call's bytes and what was dropped. */
export function chatCallFromConverse(raw: Buffer, modelId: string, stream: boolean): ChatFromConverse {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidInput('The request body is not valid JSON.');
  }
  const { request, dropped } = chatRequestFromConverse(body, modelId, stream);
  return { body: Buffer.from(JSON.stringify(request)), dropped };
}
