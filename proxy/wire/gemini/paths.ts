import type { ModelInPath, PathTarget } from '../parts.js';
import { jsonArrayAnswer } from './json-array.js';
import { geminiModel } from './models.js';
import { geminiTarget, parseGeminiCall } from './parse.js';

/**
 * Gemini's paths name the model and the action: `v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent` (`?alt=sse` for SSE, else one JSON array),
 * `:countTokens`; `GET v1beta/models` and `v1beta/models/{model}`. The
 * `@google/genai` SDK 3.x calls `v1/` unless told `apiVersion: 'v1beta'`, so
 * the model actions are served there too (`GET v1/models` stays OpenAI's).
 */

const ACTIONS: Record<string, Omit<PathTarget, 'alias' | 'sse'>> = {
  generateContent: { action: 'call', stream: false },
  streamGenerateContent: { action: 'call', stream: true },
  countTokens: { action: 'count', stream: false },
};

const MODELS = /^v1(beta)?\/models\/(.+)$/;

function route(rest: string, query: string): PathTarget | undefined {
  if (rest === 'v1beta/models') return { action: 'models', stream: false, sse: false };
  const m = MODELS.exec(rest);
  if (!m) return undefined;
  const target = geminiTarget(m[2]!);
  const known = target ? ACTIONS[target.action] : undefined;
  if (target && known) return { ...known, alias: target.alias, sse: /(?:^|&)alt=sse(?:&|$)/.test(query) };
  if (m[1] === undefined || m[2]!.includes(':')) return undefined;
  try {
    return { action: 'model', alias: decodeURIComponent(m[2]!), stream: false, sse: false };
  } catch {
    return undefined;
  }
}

export const geminiPaths: ModelInPath = {
  route,
  parse: parseGeminiCall,
  providerPath: (model, action, stream) => ({
    path: `/v1beta/models/${model}:${action === 'count' ? 'countTokens' : stream ? 'streamGenerateContent' : 'generateContent'}`,
    // Tollgate always reads Google's stream as SSE, and writes the JSON array itself for a client that wants one.
    query: stream ? 'alt=sse' : '',
  }),
  keyParam: 'key',
  oneModel: geminiModel,
  otherStream: (inner) => ({ translate: jsonArrayAnswer(inner), contentType: 'application/json' }),
};
