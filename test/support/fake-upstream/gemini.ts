/**
 * Google's Gemini API (`/v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent` with `?alt=sse` or as one JSON array, and
 * `:countTokens`), answered the way Google does. The request is read as the
 * same conversation in Chat's terms (`asChat`), so the fake's token
 * accounting and tool plan are the other formats' own: the same
 * conversation costs the same in every format.
 */
import { isObject } from '../../../shared/json.js';
import type { IdSource } from './ids.js';
import { plannedToolCalls, type PlannedCall } from './tools.js';
import type { OkBehavior } from './types.js';
import { countInputTokens, planOutput, requestStops, requestTokenLimit, tokenPiece, tokenText, type OutputPlan } from './usage.js';

type Json = Record<string, unknown>;

/** A Gemini model path's pieces: the model (its `/` as sent) and the action after the colon. */
export function geminiPath(path: string): { model: string; action: string } | undefined {
  const m = /^\/v1(?:beta)?\/models\/(.+):([A-Za-z]+)$/.exec(path);
  return m ? { model: decodeURIComponent(m[1]!), action: m[2]! } : undefined;
}

function texts(content: unknown): string {
  const parts = isObject(content) && Array.isArray(content.parts) ? content.parts : [];
  return parts.map((p: unknown) => (isObject(p) && typeof p.text === 'string' && p.thought !== true ? p.text : '')).join('');
}

/** A function's response as the text a Chat tool message would hold: `{output: text}` is that text. */
function responseText(response: unknown): string {
  if (isObject(response) && Object.keys(response).length === 1 && typeof response.output === 'string') return response.output;
  return JSON.stringify(response ?? {});
}

function chatTurns(content: Json): Json[] {
  const parts = Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
  if (content.role === 'model') {
    const calls = parts.filter((p) => isObject(p.functionCall)).map((p) => ({ function: p.functionCall }));
    return [
      {
        role: 'assistant',
        content: texts(content),
        tool_calls: calls.map((c) => ({ function: { name: (c.function as Json).name, arguments: (c.function as Json).args ?? {} } })),
      },
    ];
  }
  const results = parts
    .filter((p) => isObject(p.functionResponse))
    .map((p) => ({ role: 'tool', content: responseText((p.functionResponse as Json).response) }));
  const text = texts(content);
  // A turn of function responses alone ends on them: the tool loop's text answer comes next (tools.ts).
  return text === '' && results.length ? results : [...results, { role: 'user', content: text }];
}

const CHOICES: Record<string, string> = { NONE: 'none', ANY: 'required', AUTO: 'auto' };

/** The request in Chat's terms, for the shared accounting (usage.ts) and tool plan (tools.ts). */
export function asChat(body: Json): Json {
  const config = isObject(body.generationConfig) ? body.generationConfig : {};
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: unknown) =>
    isObject(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations.filter(isObject) : [],
  );
  const calling = isObject(body.toolConfig) && isObject(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
  const allowed = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
  const choice = allowed.length === 1 ? { type: 'function', function: { name: allowed[0] } } : CHOICES[String(calling.mode)];
  return {
    system: texts(body.systemInstruction),
    messages: (Array.isArray(body.contents) ? body.contents.filter(isObject) : []).flatMap(chatTurns),
    tools: tools.map((d) => ({
      type: 'function',
      function: { name: d.name, description: d.description, parameters: d.parametersJsonSchema ?? d.parameters },
    })),
    tool_choice: choice,
    max_tokens: config.maxOutputTokens,
    stop: config.stopSequences,
  };
}

/** One Gemini answer in the making. */
export interface GeminiAnswer {
  model: string;
  responseId: string;
  inputTokens: number;
  cachedTokens: number;
  thoughtsTokens: number;
  output: OutputPlan;
  calls: PlannedCall[];
}

export function planGeminiAnswer(model: string, body: Json, wanted: number, ids: IdSource, ok: OkBehavior | undefined): GeminiAnswer {
  const chat = asChat(body);
  const inputTokens = ok?.inputTokens ?? countInputTokens(chat);
  const output = planOutput(requestTokenLimit(chat), wanted, requestStops(chat));
  const scripted = ok?.tools;
  const calls =
    output.capped || output.stopSequence !== undefined || scripted === 'none' || ok?.textOnly
      ? []
      : scripted !== undefined
        ? scripted.map((c) => ({ name: c.name, input: c.input }))
        : plannedToolCalls('chat', chat);
  return {
    model,
    responseId: ids.next('gemini-'),
    inputTokens,
    cachedTokens: Math.min(ok?.cachedTokens ?? 0, inputTokens),
    thoughtsTokens: ok?.reasoningTokens ?? 0,
    output,
    calls,
  };
}

/**
 * `usageMetadata` as Google reports it on every chunk, running totals:
 * `emitted` the answer's tokens so far (all of them on the last chunk).
 * The prompt includes its cached part; thinking, done before the first
 * text, is counted apart from the candidates from the first chunk on.
 */
function usageMetadata(a: GeminiAnswer, emitted: number, final: boolean): Json {
  const u: Json = { promptTokenCount: a.inputTokens };
  if (emitted > 0 || final) u.candidatesTokenCount = emitted;
  u.totalTokenCount = a.inputTokens + emitted + a.thoughtsTokens;
  if (a.cachedTokens > 0) u.cachedContentTokenCount = a.cachedTokens;
  if (a.thoughtsTokens > 0) u.thoughtsTokenCount = a.thoughtsTokens;
  u.promptTokensDetails = [{ modality: 'TEXT', tokenCount: a.inputTokens }];
  return u;
}

function finishReason(a: GeminiAnswer): string {
  return a.output.capped ? 'MAX_TOKENS' : 'STOP';
}

function chunk(a: GeminiAnswer, parts: Json[], emitted: number, finish: boolean): Json {
  const candidate: Json = { content: { parts, role: 'model' }, index: 0 };
  if (finish) candidate.finishReason = finishReason(a);
  return { candidates: [candidate], usageMetadata: usageMetadata(a, emitted, finish), modelVersion: a.model, responseId: a.responseId };
}

const callParts = (a: GeminiAnswer): Json[] => a.calls.map((c) => ({ functionCall: { name: c.name, args: c.input } }));

export function geminiJson(a: GeminiAnswer): string {
  return JSON.stringify(chunk(a, a.calls.length ? callParts(a) : [{ text: tokenText(a.output.tokens) }], a.output.tokens, true));
}

/**
 * The stream's chunks: one per token of text (the last with the finish
 * reason), or the function calls whole in one chunk. Every chunk carries
 * the running usage, the last the final counts.
 */
export function geminiChunks(a: GeminiAnswer): Json[] {
  if (a.calls.length) return [chunk(a, callParts(a), a.output.tokens, true)];
  const chunks: Json[] = [];
  for (let i = 1; i <= a.output.tokens; i++) chunks.push(chunk(a, [{ text: tokenPiece(i) }], i, i === a.output.tokens));
  // An answer of no tokens still says why it ended.
  if (a.output.tokens === 0) chunks.push(chunk(a, [], 0, true));
  return chunks;
}

/** `alt=sse`: `data: …` events separated by CRLF CRLF, as Google writes them; else one JSON array, an element per chunk. */
export function geminiFrames(a: GeminiAnswer, sse: boolean): string[] {
  const chunks = geminiChunks(a).map((c) => JSON.stringify(c));
  if (sse) return chunks.map((c) => `data: ${c}\r\n\r\n`);
  return chunks.map((c, i) => (i === 0 ? '[' : '\n,\r\n') + c).concat('\n]');
}

/** `:countTokens` of a body (`contents`…, or a whole `generateContentRequest`). */
export function geminiCount(body: Json): string {
  const request = isObject(body.generateContentRequest) ? body.generateContentRequest : body;
  return JSON.stringify({ totalTokens: countInputTokens(asChat(request)) });
}
