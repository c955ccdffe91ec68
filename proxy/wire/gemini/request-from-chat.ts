import { invalidInput } from '../../../shared/errors.js';
import { isObject } from '../../../shared/json.js';
import type { ModelConfig } from '../../../shared/models.js';
import type { ParsedCall } from '../../call.js';
import { budgetOfEffort, isChatEffort } from '../../translate/reasoning.js';
import type { TranslateOptions, Translation, Translator } from '../../translate/types.js';
import { argsOf } from './answer-from-chat.js';
import { createGeminiAnswerTranslator } from './stream-to-chat.js';

/**
 * A Chat Completions client calling a provider whose endpoint is Google's
 * Gemini API: the request goes Chat → Gemini here (the model and whether it
 * streams go in the path, not the body), the answer comes back in
 * answer-to-chat.ts and stream-to-chat.ts. What Gemini has no place for
 * (`user`, `metadata`, `logprobs`, non-function tools…) is dropped and named.
 */

type Json = Record<string, unknown>;
type Dropped = Set<string>;

/**
 * Gemini 3 asks every function call it is shown to carry the thought
 * signature it gave; a call made by another model has none, and Google's
 * documented stand-in says so.
 */
export const FOREIGN_SIGNATURE = 'skip_thought_signature_validator';

/** Image types Gemini reads from a URL, by the URL's extension (Gemini needs the type named). */
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif' };

function dataUrl(url: string): { mimeType: string; data: string } | undefined {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { mimeType: m[1]!, data: m[2]! } : undefined;
}

function imagePart(url: string, at: string): Json {
  const inline = dataUrl(url);
  if (inline) return { inlineData: inline };
  const ext = /\.([a-z]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  const mimeType = ext ? IMAGE_TYPES[ext] : undefined;
  if (!mimeType) throw invalidInput(`${at}.image_url.url: an image URL must end in .png, .jpg, .webp or .gif (or be a data: URL) for Gemini.`);
  return { fileData: { mimeType, fileUri: url } };
}

/** A user message's content part → a Gemini part. */
function userPart(part: unknown, at: string): Json {
  if (!isObject(part)) throw invalidInput(`${at}: must be a content part object.`);
  if (part.type === 'text' && typeof part.text === 'string') return { text: part.text };
  if (part.type === 'image_url' && isObject(part.image_url) && typeof part.image_url.url === 'string') return imagePart(part.image_url.url, at);
  if (part.type === 'input_audio' && isObject(part.input_audio) && typeof part.input_audio.data === 'string') {
    return { inlineData: { mimeType: part.input_audio.format === 'mp3' ? 'audio/mp3' : 'audio/wav', data: part.input_audio.data } };
  }
  const file = isObject(part.file) && typeof part.file.file_data === 'string' ? dataUrl(part.file.file_data) : undefined;
  if (part.type === 'file' && file) return { inlineData: file };
  throw invalidInput(`${at}: a ${JSON.stringify(part.type)} part has no Gemini form.`);
}

function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p, j) => {
      if (!isObject(p) || typeof p.text !== 'string') throw invalidInput(`${at}.${j}: only text parts may be given here.`);
      return p.text;
    })
    .join('');
}

/** A system message → its text parts, one per Chat text part. */
function systemParts(content: unknown, at: string): Json[] {
  if (!Array.isArray(content)) return [{ text: textOf(content, at) }];
  return content.map((p, j) => ({ text: textOf([p], `${at}.${j}`) }));
}

/** A tool message's text → the function's response: a JSON object as it is, anything else as `{output: text}`. */
function functionResponse(text: string): Json {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    /* text, not JSON */
  }
  return { output: text };
}

/** The conversation being built: a run of tool messages is one user turn of function responses. */
class Turns {
  readonly contents: Json[] = [];
  readonly system: Json[] = [];
  private readonly names = new Map<string, string>();
  private responses = false;

  add(role: 'user' | 'model', parts: Json[], responses = false): void {
    const last = this.contents.at(-1);
    if (responses && this.responses && last) (last.parts as Json[]).push(...parts);
    else if (parts.length) this.contents.push({ role, parts });
    this.responses = responses;
  }

  call(id: string, name: string): void {
    this.names.set(id, name);
  }

  nameOf(id: string): string {
    return this.names.get(id) ?? id;
  }
}

function assistantParts(m: Json, at: string, turns: Turns): Json[] {
  const parts: Json[] = [];
  const text = m.content === null || m.content === undefined ? '' : textOf(m.content, `${at}.content`);
  if (text) parts.push({ text });
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    if (!isObject(c) || !isObject(c.function) || typeof c.function.name !== 'string')
      throw invalidInput(`${at}.tool_calls: each needs a function name.`);
    const part: Json = { functionCall: { id: c.id, name: c.function.name, args: argsOf(c.function.arguments) } };
    if (!parts.some((p) => p.functionCall !== undefined)) part.thoughtSignature = FOREIGN_SIGNATURE;
    if (typeof c.id === 'string') turns.call(c.id, c.function.name);
    parts.push(part);
  }
  return parts;
}

function geminiContents(messages: unknown): Turns {
  if (!Array.isArray(messages)) throw invalidInput('messages: an array of messages is required.');
  const turns = new Turns();
  messages.forEach((m, i) => {
    const at = `messages.${i}`;
    if (!isObject(m)) throw invalidInput(`${at}: must be a message object.`);
    if (m.role === 'system' || m.role === 'developer') turns.system.push(...systemParts(m.content, `${at}.content`));
    else if (m.role === 'user') {
      const parts =
        typeof m.content === 'string'
          ? [{ text: m.content }]
          : Array.isArray(m.content)
            ? m.content.map((p, j) => userPart(p, `${at}.content.${j}`))
            : [];
      turns.add('user', parts);
    } else if (m.role === 'assistant') turns.add('model', assistantParts(m, at, turns));
    else if (m.role === 'tool') {
      const id = typeof m.tool_call_id === 'string' ? m.tool_call_id : '';
      const response = functionResponse(textOf(m.content, `${at}.content`));
      turns.add('user', [{ functionResponse: { id, name: turns.nameOf(id), response } }], true);
    } else throw invalidInput(`${at}.role: must be system, developer, user, assistant or tool.`);
  });
  return turns;
}

function geminiTools(tools: unknown, out: Json, dropped: Dropped): void {
  if (!Array.isArray(tools)) throw invalidInput('tools: must be an array.');
  const declarations: Json[] = [];
  for (const t of tools) {
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) {
      dropped.add(`tools[${isObject(t) ? String(t.type) : 'unknown'}]`);
      continue;
    }
    const fn = t.function;
    const declaration: Json = { name: fn.name };
    if (typeof fn.description === 'string') declaration.description = fn.description;
    if (fn.parameters !== undefined) declaration.parametersJsonSchema = fn.parameters;
    if (fn.strict !== undefined) dropped.add('tools.strict');
    declarations.push(declaration);
  }
  if (declarations.length) (out.tools as Json[]).push({ functionDeclarations: declarations });
}

function toolConfig(choice: unknown): Json | undefined {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
  throw invalidInput('tool_choice: must be auto, none, required or a function.');
}

function responseFormat(format: unknown, config: Json): void {
  if (!isObject(format)) throw invalidInput('response_format: must be an object.');
  if (format.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format.type === 'json_schema' && isObject(format.json_schema)) {
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = format.json_schema.schema;
  }
}

/** `reasoning_effort` → a thinking budget on the shared scale (reasoning.ts), where the model entry says its provider thinks; `none` turns thinking off. */
function thinking(effort: unknown, model: ModelConfig, reasoning: boolean, config: Json, dropped: Dropped): void {
  if (!reasoning) {
    dropped.add('reasoning_effort');
    return;
  }
  if (effort === 'none') config.thinkingConfig = { thinkingBudget: 0 };
  else if (isChatEffort(effort)) {
    const budget = budgetOfEffort(effort, (config.maxOutputTokens as number | undefined) ?? model.max_output_tokens);
    if (budget !== undefined) config.thinkingConfig = { thinkingBudget: budget };
  } else dropped.add('reasoning_effort');
}

const SAMPLING: Record<string, string> = {
  temperature: 'temperature',
  top_p: 'topP',
  n: 'candidateCount',
  presence_penalty: 'presencePenalty',
  frequency_penalty: 'frequencyPenalty',
  seed: 'seed',
};
const READ_ELSEWHERE = new Set(['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'tool_choice']);

function readField(key: string, v: unknown, model: ModelConfig, options: TranslateOptions, out: Json, dropped: Dropped): void {
  const config = out.generationConfig as Json;
  if (SAMPLING[key]) config[SAMPLING[key]] = v;
  else if (key === 'stop') config.stopSequences = typeof v === 'string' ? [v] : v;
  else if (key === 'response_format') responseFormat(v, config);
  else if (key === 'reasoning_effort') thinking(v, model, options.reasoning === true, config, dropped);
  else if (key === 'tools') geminiTools(v, out, dropped);
  else if (key === 'web_search_options') (out.tools as Json[]).push({ googleSearch: {} });
  // user, metadata, store, logprobs, parallel_tool_calls, service tiers…: no Gemini form.
  else if (!READ_ELSEWHERE.has(key)) dropped.add(key);
}

/** The Chat request → Gemini's `generateContent` body and what it dropped. */
export function geminiRequest(call: ParsedCall, model: ModelConfig, options: TranslateOptions = {}): Translation {
  const body = call.body;
  const dropped: Dropped = new Set();
  const turns = geminiContents(body.messages);
  const out: Json = { contents: turns.contents, tools: [], generationConfig: {} };
  const config = out.generationConfig as Json;
  const max = body.max_completion_tokens ?? body.max_tokens;
  // Capped at the model's own ceiling, which the hold assumes.
  if (typeof max === 'number') config.maxOutputTokens = Math.min(max, model.max_output_tokens);
  for (const key of Object.keys(body)) if (body[key] !== undefined && body[key] !== null) readField(key, body[key], model, options, out, dropped);
  if (turns.system.length) out.systemInstruction = { parts: turns.system };
  if (Object.keys(config).length === 0) delete out.generationConfig;
  if ((out.tools as Json[]).length === 0) delete out.tools;
  else if (body.tool_choice !== undefined && body.tool_choice !== null) out.toolConfig = toolConfig(body.tool_choice);
  return { request: out, dropped: [...dropped] };
}

export const chatToGemini: Translator = {
  translate: geminiRequest,
  request: (call, model) => geminiRequest(call, model, { reasoning: model.reasoning }).request,
  answer: (call) => createGeminiAnswerTranslator(call),
};
