import type { WireFormat } from '../call.js';
import type { Route } from './steps/step.js';

const PATH = /^\/([^/]+)\/(anthropic\/)?v1\/(chat\/completions|messages|messages\/count_tokens|models)$/;

/** The request's path → its format, workspace and action; undefined when no route matches. */
export function route(path: string): Route | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  const format: WireFormat = m[2] ? 'messages' : 'chat';
  if (m[3] === 'models') return { format, slug: m[1]!, action: 'models' };
  if (m[3] === 'messages/count_tokens') return format === 'messages' ? { format, slug: m[1]!, action: 'count' } : undefined;
  if ((format === 'chat') !== (m[3] === 'chat/completions')) return undefined;
  return { format, slug: m[1]!, action: 'call' };
}
