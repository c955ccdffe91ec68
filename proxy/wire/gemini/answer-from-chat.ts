import { isObject, type JsonObject } from '../../../shared/json.js';
import type { ParsedCall } from '../../call.js';
import { geminiErrorFrom, googleError } from './errors.js';
import { geminiFinishOf } from './finish.js';
import { usageMetadataOf } from './usage.js';

/**
 * A Chat Completions provider's answer → what a Gemini client expects: the
 * whole `GenerateContentResponse` and errors (the stream, chunk by chunk, is
 * stream-from-chat.ts).
 */

type Json = Record<string, unknown>;

export function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A tool call's arguments: the JSON object the provider wrote, or `{}` when it wrote something else. */
export function argsOf(args: unknown): Json {
  if (typeof args !== 'string' || args === '') return {};
  const parsed = parse(args);
  return isObject(parsed) ? parsed : {};
}

/** Whether the client asked to see the model's thoughts (Chat servers' `reasoning_content` then becomes thought parts). */
export function wantsThoughts(call: ParsedCall): boolean {
  const config = isObject(call.body.generationConfig) ? call.body.generationConfig : {};
  return isObject(config.thinkingConfig) && config.thinkingConfig.includeThoughts === true;
}

/** The reasoning a Chat server sends beside the answer (`reasoning_content`, or `reasoning`), if any. */
export function reasoningOf(from: Json): string | undefined {
  for (const key of ['reasoning_content', 'reasoning']) {
    const v = from[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

/** A Chat function call → Gemini's, its id kept (the client sends it back with the response). */
export function functionCallPart(id: unknown, name: unknown, args: unknown): Json {
  const call: Json = { name: typeof name === 'string' ? name : '', args: argsOf(args) };
  if (typeof id === 'string' && id !== '') call.id = id;
  return { functionCall: call };
}

/** The text of a Chat message's content: a string, or (from some servers) an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) if (isObject(part) && typeof part.text === 'string') out += part.text;
  return out;
}

function candidateOf(choice: Json, index: number, thoughts: boolean, dropped: Set<string>): Json {
  const message = isObject(choice.message) ? choice.message : {};
  const parts: Json[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) {
    if (thoughts) parts.push({ text: reasoning, thought: true });
    else dropped.add('reasoning_content');
  }
  const text = contentText(message.content) || (typeof message.refusal === 'string' ? message.refusal : '');
  if (text) parts.push({ text });
  for (const c of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (isObject(c) && isObject(c.function)) parts.push(functionCallPart(c.id, c.function.name, c.function.arguments));
  }
  const finish = typeof message.refusal === 'string' && message.refusal ? 'SAFETY' : geminiFinishOf(choice.finish_reason);
  return { content: { role: 'model', parts }, finishReason: finish, index };
}

/** A whole Chat completion (parsed) → Gemini's answer, its `modelVersion` the alias the client called. */
export function geminiJsonOf(call: ParsedCall, completion: unknown, dropped: Set<string>): Buffer {
  if (!isObject(completion) || !Array.isArray(completion.choices)) {
    // Some servers report errors with a 200; the status is sent by now, so the body says it.
    return Buffer.from(googleError(502, 'The model provider sent an answer that is not a chat completion.'));
  }
  const thoughts = wantsThoughts(call);
  const candidates = completion.choices.map((c: unknown, i) => candidateOf(isObject(c) ? c : {}, i, thoughts, dropped));
  const out: JsonObject = { candidates, usageMetadata: usageMetadataOf(completion.usage), modelVersion: call.alias };
  if (typeof completion.id === 'string') out.responseId = completion.id;
  return Buffer.from(JSON.stringify(out));
}

export function geminiJson(call: ParsedCall, body: Buffer, dropped: Set<string>): Buffer {
  return geminiJsonOf(call, parse(body.toString('utf8')), dropped);
}

/** A Chat provider's error answer → Google's error shape, same status, the provider's message kept. */
export const geminiError = geminiErrorFrom;
