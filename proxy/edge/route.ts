import type { WireFormat } from '../call.js';
import type { Route } from './steps/step.js';

const PATH = /^\/([^/]+)\/(anthropic\/)?v1\/(chat\/completions|messages|messages\/count_tokens|models|embeddings)$/;
/** One model: the alias is one segment, its `/` escaped (`tg%2Fgpt`, as the OpenAI SDK sends it) or not (`tg/gpt`). */
const ONE_MODEL = /^\/([^/]+)\/(anthropic\/)?v1\/models\/(.+)$/;
/** A format's base, which clients probe with HEAD before their first call (Claude Code does at start-up). */
const BASE = /^\/[^/]+\/(anthropic|anthropic\/v1|v1)\/?$/;

/** The alias of a one-model path, undefined when its escapes are not valid. */
function aliasOf(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The request's path → its format, workspace and action; undefined when no route matches. */
export function route(path: string): Route | undefined {
  const m = PATH.exec(path);
  if (!m) {
    const one = ONE_MODEL.exec(path);
    const alias = one ? aliasOf(one[3]!) : undefined;
    return one && alias ? { format: one[2] ? 'messages' : 'chat', slug: one[1]!, action: 'model', alias } : undefined;
  }
  const format: WireFormat = m[2] ? 'messages' : 'chat';
  if (m[3] === 'models') return { format, slug: m[1]!, action: 'models' };
  if (m[3] === 'messages/count_tokens') return format === 'messages' ? { format, slug: m[1]!, action: 'count' } : undefined;
  if (m[3] === 'embeddings') return format === 'chat' ? { format, slug: m[1]!, action: 'embed' } : undefined;
  if ((format === 'chat') !== (m[3] === 'chat/completions')) return undefined;
  return { format, slug: m[1]!, action: 'call' };
}

/** A HEAD on a format's base (`/{ws}/v1`, `/{ws}/anthropic`, `/{ws}/anthropic/v1`): a connectivity probe. */
export function isBaseProbe(method: string | undefined, path: string): boolean {
  return method === 'HEAD' && BASE.test(path);
}
