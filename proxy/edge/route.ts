import type { WireFormat } from '../call.js';
import type { Route } from './steps/step.js';

const PATH =
  /^\/([^/]+)\/(anthropic\/)?v1\/(chat\/completions|messages|messages\/count_tokens|responses|responses\/input_tokens|responses\/compact|models|embeddings)$/;
/** One model: the alias is one segment, its `/` escaped (`tg%2Fgpt`, as the OpenAI SDK sends it) or not (`tg/gpt`). */
const ONE_MODEL = /^\/([^/]+)\/(anthropic\/)?v1\/models\/(.+)$/;
/** A format's base, which clients probe with HEAD before their first call. */
const BASE = /^\/[^/]+\/(anthropic|anthropic\/v1|v1)\/?$/;
/**
 * `{base}/api/hello`: Claude Code's start-up probe (a HEAD that warms the
 * connection) and its connectivity check (a GET that wants a 2xx), both
 * without a key. `{base}` is what ANTHROPIC_BASE_URL holds, `/{ws}/anthropic`.
 */
const HELLO = /^\/[^/]+\/(anthropic|anthropic\/v1|v1)\/api\/hello$/;

/** The alias of a one-model path, undefined when its escapes are not valid. */
function aliasOf(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Each OpenAI-side path's format and action (the Messages ones are under `/anthropic/`). */
const OPENAI_PATHS: Record<string, { format: WireFormat; action: Route['action'] }> = {
  'chat/completions': { format: 'chat', action: 'call' },
  responses: { format: 'responses', action: 'call' },
  'responses/input_tokens': { format: 'responses', action: 'count' },
  'responses/compact': { format: 'responses', action: 'compact' },
  models: { format: 'chat', action: 'models' },
  embeddings: { format: 'chat', action: 'embed' },
};
const ANTHROPIC_PATHS: Record<string, { format: WireFormat; action: Route['action'] }> = {
  messages: { format: 'messages', action: 'call' },
  'messages/count_tokens': { format: 'messages', action: 'count' },
  models: { format: 'messages', action: 'models' },
};

/** The request's path → its format, workspace and action; undefined when no route matches. */
export function route(path: string): Route | undefined {
  const m = PATH.exec(path);
  if (!m) {
    const one = ONE_MODEL.exec(path);
    const alias = one ? aliasOf(one[3]!) : undefined;
    return one && alias ? { format: one[2] ? 'messages' : 'chat', slug: one[1]!, action: 'model', alias } : undefined;
  }
  const found = (m[2] ? ANTHROPIC_PATHS : OPENAI_PATHS)[m[3]!];
  return found ? { ...found, slug: m[1]! } : undefined;
}

/** The format to answer an unroutable path in: its `/anthropic/` part says Messages, `/responses` the Responses API. */
export function formatOfPath(path: string): WireFormat {
  if (path.includes('/anthropic/')) return 'messages';
  return /\/v1\/responses(\/|$)/.test(path) ? 'responses' : 'chat';
}

/** A HEAD on a format's base (`/{ws}/v1`, `/{ws}/anthropic`, `/{ws}/anthropic/v1`), or a HEAD or GET of its `api/hello`: a connectivity probe. */
export function isBaseProbe(method: string | undefined, path: string): boolean {
  if (method === 'HEAD') return BASE.test(path) || HELLO.test(path);
  return method === 'GET' && HELLO.test(path);
}
