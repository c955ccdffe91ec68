import type { WireFormat } from '../call.js';
import type { Route } from './steps/step.js';

const PATH = /^\/([^/]+)\/(anthropic\/)?v1\/(chat\/completions|messages|messages\/count_tokens|responses|responses\/input_tokens|models)$/;

/** Each OpenAI-side path's format and action (the Messages ones are under `/anthropic/`). */
const OPENAI_PATHS: Record<string, { format: WireFormat; action: Route['action'] }> = {
  'chat/completions': { format: 'chat', action: 'call' },
  responses: { format: 'responses', action: 'call' },
  'responses/input_tokens': { format: 'responses', action: 'count' },
  models: { format: 'chat', action: 'models' },
};
const ANTHROPIC_PATHS: Record<string, { format: WireFormat; action: Route['action'] }> = {
  messages: { format: 'messages', action: 'call' },
  'messages/count_tokens': { format: 'messages', action: 'count' },
  models: { format: 'messages', action: 'models' },
};

/** The request's path → its format, workspace and action; undefined when no route matches. */
export function route(path: string): Route | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  const found = (m[2] ? ANTHROPIC_PATHS : OPENAI_PATHS)[m[3]!];
  return found ? { ...found, slug: m[1]! } : undefined;
}

/** The format to answer an unroutable path in: its `/anthropic/` part says Messages, `/responses` the Responses API. */
export function formatOfPath(path: string): WireFormat {
  if (path.includes('/anthropic/')) return 'messages';
  return /\/v1\/responses(\/|$)/.test(path) ? 'responses' : 'chat';
}
