import { invalidInput } from '../../../shared/errors.js';
import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { effortOfBudget } from '../../translate/reasoning.js';
import type { TranslateOptions, Translation, Translator } from '../../translate/types.js';
import { createChatAnswerTranslator } from './stream-from-chat.js';
import { jsonSchemaOf } from './json-schema.js';
import { parseGeminiRequest, type GeminiContent, type GeminiPart, type GeminiRequest } from './schema.js';

/**
 * A Gemini client calling a provider that speaks only Chat Completions: the
 * request goes Gemini → Chat here, the answer comes back in
 * answer-from-chat.ts and stream-from-chat.ts. What has a Chat counterpart is
 * translated; what the provider cannot honour (safety settings, top-K,
 * thought signatures, Google's own tools) is dropped and named; only what
 * would change the answer the client relies on is refused (400 naming the
 * field). docs/proxy.md lists the rules.
 */

type Json = Record<string, unknown>;
type Dropped = Set<string>;

/** The Chat Completions API takes at most this many stop sequences. */
const MAX_STOP_SEQUENCES = 4;

function refuse(field: string, why: string): Error {
  return invalidInput(`${field}: ${why} This model's provider speaks only Chat Completions, so the call cannot be translated.`);
}

/** Function call ids: Gemini's are optional, Chat's are not. A call without one gets one, and its response (matched by name, in order) the same. */
class CallIds {
  private made = 0;
  private readonly pending = new Map<string, string[]>();

  forCall(name: string, id: string | undefined): string {
    const out = id ?? `call_gemini_${this.made++}`;
    const queue = this.pending.get(name) ?? [];
    queue.push(out);
    this.pending.set(name, queue);
    return out;
  }

  forResponse(name: string, id: string | undefined): string {
    const queue = this.pending.get(name) ?? [];
    const at = id === undefined ? 0 : queue.indexOf(id);
    if (at >= 0 && queue.length > at) return queue.splice(at, 1)[0]!;
    return id ?? `call_gemini_${this.made++}`;
  }
}

/** Inline bytes → a Chat content part: images, PDFs and wav/mp3 audio have one. */
function inlinePart(blob: { mimeType: string; data: string }, at: string): Json {
  const { mimeType, data } = blob;
  if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } };
  if (mimeType === 'application/pdf') return { type: 'file', file: { filename: 'file.pdf', file_data: `data:${mimeType};base64,${data}` } };
  const audio = mimeType === 'audio/wav' ? 'wav' : mimeType === 'audio/mp3' || mimeType === 'audio/mpeg' ? 'mp3' : undefined;
  if (audio) return { type: 'input_audio', input_audio: { data, format: audio } };
  throw refuse(`${at}.inlineData.mimeType`, `inline ${JSON.stringify(mimeType)} data has no Chat Completions form.`);
}

/** A function's result as the text of its `tool` message: `{output: text}` is the text itself, any other object its JSON. */
export function toolResultText(response: Record<string, unknown> | undefined): string {
  if (response === undefined) return '';
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response.output === 'string') return response.output;
  return JSON.stringify(response);
}

/** One user turn → its function responses as `tool` messages (first, in order), then the rest as one user message. */
function userMessages(content: GeminiContent, at: string, ids: CallIds, out: Json[]): void {
  const parts: Json[] = [];
  content.parts.forEach((part, j) => {
    const where = `${at}.parts[${j}]`;
    if (part.text !== undefined) parts.push({ type: 'text', text: part.text });
    else if (part.inlineData) parts.push(inlinePart(part.inlineData, where));
    else if (part.fileData) {
      if (!(part.fileData.mimeType ?? '').startsWith('image/')) throw refuse(`${where}.fileData`, 'only an image file has a Chat Completions form.');
      parts.push({ type: 'image_url', image_url: { url: part.fileData.fileUri } });
    } else if (part.functionResponse) {
      const r = part.functionResponse;
      out.push({ role: 'tool', tool_call_id: ids.forResponse(r.name, r.id), content: toolResultText(r.response) });
    } else throw refuse(where, 'a part of this kind has no Chat Completions form in a user turn.');
  });
  if (parts.length === 0) return;
  const onlyText = parts.length === 1 && parts[0]!.type === 'text';
  out.push({ role: 'user', content: onlyText ? parts[0]!.text : parts });
}

/** What a model turn's part holds besides text and function calls, named when dropped. */
function otherPart(part: GeminiPart): string {
  const key = Object.keys(part).find((k) => k !== 'thoughtSignature' && part[k] !== undefined);
  return `contents[${key ?? 'empty'}]`;
}

/** One model turn → an assistant message: its text, its function calls as `tool_calls`; thoughts and signatures are dropped. */
function assistantMessage(content: GeminiContent, ids: CallIds, dropped: Dropped): Json {
  let text: string | undefined;
  const calls: Json[] = [];
  for (const part of content.parts) {
    if (part.thoughtSignature !== undefined) dropped.add('thoughtSignature');
    if (part.thought === true) dropped.add('contents[thought]');
    else if (part.text !== undefined) text = (text ?? '') + part.text;
    else if (part.functionCall) {
      const { name, id, args } = part.functionCall;
      calls.push({ id: ids.forCall(name, id), type: 'function', function: { name, arguments: JSON.stringify(args ?? {}) } });
    } else if (part.thoughtSignature === undefined || Object.keys(part).length > 1) dropped.add(otherPart(part));
  }
  const message: Json = { role: 'assistant', content: text ?? (calls.length ? null : '') };
  if (calls.length) message.tool_calls = calls;
  return message;
}

function systemMessage(system: GeminiContent | undefined): Json | undefined {
  if (system === undefined) return undefined;
  const texts = system.parts.map((p, j) => {
    if (p.text === undefined) throw invalidInput(`systemInstruction.parts[${j}]: system instructions must be text.`);
    return p.text;
  });
  return { role: 'system', content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text', text })) };
}

function chatMessages(request: GeminiRequest, dropped: Dropped): Json[] {
  const out: Json[] = [];
  const system = systemMessage(request.systemInstruction);
  if (system) out.push(system);
  const ids = new CallIds();
  request.contents.forEach((content, i) => {
    const at = `contents[${i}]`;
    const role = content.role ?? 'user';
    if (role === 'model') out.push(assistantMessage(content, ids, dropped));
    // `function` is the role older clients gave a turn of function responses.
    else if (role === 'user' || role === 'function') userMessages(content, at, ids, out);
    else throw invalidInput(`${at}.role: must be "user" or "model".`);
  });
  return out;
}

/** Function declarations → Chat function tools; Google's own tools are dropped by name, but Google Search, which becomes web search. */
function chatTools(request: GeminiRequest, out: Json, dropped: Dropped): void {
  const tools: Json[] = [];
  for (const tool of request.tools ?? []) {
    for (const key of Object.keys(tool)) {
      if (key === 'functionDeclarations' || tool[key] === undefined) continue;
      if (key === 'googleSearch' || key === 'googleSearchRetrieval') out.web_search_options = {};
      else dropped.add(`tools[${key}]`);
    }
    for (const fn of tool.functionDeclarations ?? []) {
      const parameters = fn.parametersJsonSchema ?? (fn.parameters ? jsonSchemaOf(fn.parameters) : { type: 'object', properties: {} });
      const chat: Json = { name: fn.name, parameters };
      if (fn.description !== undefined) chat.description = fn.description;
      for (const key of ['behavior', 'response', 'responseJsonSchema']) if (fn[key] !== undefined) dropped.add(`tools.functionDeclarations.${key}`);
      tools.push({ type: 'function', function: chat });
    }
  }
  if (tools.length) out.tools = tools;
}

/** `toolConfig.functionCallingConfig` → `tool_choice`: ANY with one allowed name forces that function. */
function chatToolChoice(request: GeminiRequest, out: Json, dropped: Dropped): void {
  const config = request.toolConfig?.functionCallingConfig;
  for (const key of Object.keys(request.toolConfig ?? {})) if (key !== 'functionCallingConfig') dropped.add(`toolConfig.${key}`);
  if (config === undefined || out.tools === undefined) return;
  const names = config.allowedFunctionNames ?? [];
  switch (config.mode) {
    case 'ANY':
      out.tool_choice = names.length === 1 ? { type: 'function', function: { name: names[0] } } : 'required';
      if (names.length > 1) dropped.add('toolConfig.functionCallingConfig.allowedFunctionNames');
      break;
    case 'NONE':
      out.tool_choice = 'none';
      break;
    case 'VALIDATED':
      dropped.add('toolConfig.functionCallingConfig.mode');
      out.tool_choice = 'auto';
      break;
    default:
      out.tool_choice = 'auto';
  }
}

/** `responseMimeType` with its schema → `response_format`; a plain-text type asks for nothing. */
function responseFormat(config: NonNullable<GeminiRequest['generationConfig']>, out: Json, dropped: Dropped): void {
  const mime = config.responseMimeType;
  const schema = config.responseJsonSchema ?? (config.responseSchema ? jsonSchemaOf(config.responseSchema) : undefined);
  if (mime === 'application/json') {
    out.response_format = schema === undefined ? { type: 'json_object' } : { type: 'json_schema', json_schema: { name: 'output', schema } };
  } else if (mime !== undefined && mime !== 'text/plain') dropped.add('generationConfig.responseMimeType');
  else if (schema !== undefined) dropped.add('generationConfig.responseSchema');
}

/** `thinkingConfig` → `reasoning_effort` where the model entry says its provider takes one; a budget of 0 turns thinking off. */
function reasoningEffort(config: NonNullable<GeminiRequest['generationConfig']>, reasoning: boolean, out: Json, dropped: Dropped): void {
  const thinking = config.thinkingConfig;
  if (thinking === undefined) return;
  if (thinking.includeThoughts === true) dropped.add('generationConfig.thinkingConfig.includeThoughts');
  const asked = thinking.thinkingBudget !== undefined || thinking.thinkingLevel !== undefined;
  if (!asked) return;
  if (!reasoning) {
    dropped.add('generationConfig.thinkingConfig');
    return;
  }
  const level = thinking.thinkingLevel?.toLowerCase();
  const budget = thinking.thinkingBudget;
  if (level === 'minimal' || level === 'low' || level === 'medium' || level === 'high') out.reasoning_effort = level;
  else if (budget === 0) out.reasoning_effort = 'minimal';
  // -1 is Google's "as the model sees fit": the provider's default.
  else if (budget !== undefined && budget > 0) out.reasoning_effort = effortOfBudget(budget);
  else if (level !== undefined) dropped.add('generationConfig.thinkingConfig.thinkingLevel');
}

const SAMPLING: Record<string, string> = {
  temperature: 'temperature',
  topP: 'top_p',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  seed: 'seed',
  candidateCount: 'n',
};
const READ_BELOW = new Set(['maxOutputTokens', 'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'thinkingConfig']);

function generationConfig(request: GeminiRequest, options: TranslateOptions, out: Json, dropped: Dropped): void {
  const config = request.generationConfig;
  if (config === undefined) return;
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined || value === null || READ_BELOW.has(key)) continue;
    const chat = SAMPLING[key];
    if (chat) out[chat] = value;
    // topK, response modalities, speech, media resolution, logprobs…: no Chat form.
    else dropped.add(`generationConfig.${key}`);
  }
  const stop = config.stopSequences ?? [];
  if (stop.length > MAX_STOP_SEQUENCES)
    throw refuse(
      'generationConfig.stopSequences',
      `at most ${MAX_STOP_SEQUENCES} stop sequences fit a Chat Completions call (${stop.length} given).`,
    );
  if (stop.length) out.stop = stop;
  responseFormat(config, out, dropped);
  reasoningEffort(config, options.reasoning === true, out, dropped);
}

const TRANSLATED = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig']);

/** The Gemini request → a Chat Completions request and what it dropped. */
export function chatRequest(call: ParsedCall, model: ModelConfig, options: TranslateOptions = {}): Translation {
  const request = parseGeminiRequest(call.body);
  if (request.cachedContent !== undefined) throw refuse('cachedContent', "content cached on Google's side cannot reach another provider.");
  const dropped: Dropped = new Set();
  const out: Json = { model: model.upstream_model, messages: chatMessages(request, dropped) };
  // Capped at the model's own ceiling, which the hold assumes.
  if (call.maxTokens !== undefined) out.max_tokens = Math.min(call.maxTokens, model.max_output_tokens);
  chatTools(request, out, dropped);
  chatToolChoice(request, out, dropped);
  generationConfig(request, options, out, dropped);
  for (const key of Object.keys(call.body)) if (!TRANSLATED.has(key) && call.body[key] !== undefined) dropped.add(key);
  if (call.stream) {
    out.stream = true;
    // The proxy bills from the provider's usage, which a Chat stream sends only when asked.
    out.stream_options = { include_usage: true };
  }
  return { request: out, dropped: [...dropped] };
}

export const geminiToChat: Translator = {
  translate: chatRequest,
  request: (call, model) => chatRequest(call, model, { reasoning: model.reasoning }).request,
  answer: (call) => createChatAnswerTranslator(call),
};
