import { WIRE_FORMATS } from '../../shared/wire-formats.js';
import type { WireFormat } from '../call.js';
import { PIVOT, WIRE } from '../wire/registry.js';
import type { Route } from './steps/step.js';
import { vertexRoute } from '../wire/vertex/client.js';

/** A path's workspace slug and the rest after it. */
const SLUGGED = /^\/([^/]+)\/(.+)$/;
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

/** Every format's edge paths (`v1/chat/completions`, `anthropic/v1/messages`…) → format and action, from the registry. */
const ACTIONS = new Map<string, { format: WireFormat; action: Route['action'] }>();
/** Each base with a model list (`v1/models/`, `anthropic/v1/models/`) → the format whose one-model answer it gives. */
const ONE_MODEL: [prefix: string, format: WireFormat][] = [];
for (const format of WIRE_FORMATS) {
  const { base, paths } = WIRE[format].edge;
  for (const [path, action] of Object.entries(paths)) {
    ACTIONS.set(`${base}/${path}`, { format, action });
    if (action === 'models') ONE_MODEL.push([`${base}/models/`, format]);
  }
}

/**
 * Bedrock's runtime paths under `/{ws}/bedrock`, the model id one segment:
 * InvokeModel's, as Claude Code sends them under `ANTHROPIC_BEDROCK_BASE_URL`
 * (a Messages call), and Converse's, as the AWS SDK sends them (a Chat call).
 */
const BEDROCK_RUNTIME = /^bedrock\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/;

/** The formats whose paths name the model (Gemini's): routed by their own rule after the fixed paths. */
const MODEL_IN_PATH = WIRE_FORMATS.filter((f) => WIRE[f].modelInPath !== undefined);

/** The request's path (and query) → its format, workspace and action; undefined when no route matches. */
export function route(path: string, query = ''): Route | undefined {
  const m = SLUGGED.exec(path);
  if (!m) return undefined;
  const rest = m[2]!;
  const found = ACTIONS.get(rest);
  if (found) return { ...found, slug: m[1]! };
  const bedrock = BEDROCK_RUNTIME.exec(rest);
  if (bedrock) {
    // Ids hold `:` and `.`, escaped by the AWS SDKs and not by Claude Code's client: both read the same.
    const alias = aliasOf(bedrock[1]!);
    if (!alias) return undefined;
    const operation = bedrock[2]!;
    const api = operation.startsWith('converse') ? 'converse' : 'invoke';
    const stream = operation.endsWith('stream');
    return { format: api === 'converse' ? 'chat' : 'messages', slug: m[1]!, action: 'call', alias, bedrock: { stream, api } };
  }
  for (const format of MODEL_IN_PATH) {
    const target = WIRE[format].modelInPath!.route(rest, query);
    if (target) return { format, slug: m[1]!, ...target };
  }
  const vertex = vertexRoute(rest);
  // A call's body names no model: the path's is carried as the alias, and the parse reads the body as the call it stands for.
  if (vertex) return { format: 'messages', action: vertex.action, slug: m[1]!, vertex, ...(vertex.action === 'call' ? { alias: vertex.model } : {}) };
  // One model: the alias is one segment, its `/` escaped (`tg%2Fgpt`, as the OpenAI SDK sends it) or not (`tg/gpt`).
  for (const [prefix, format] of ONE_MODEL) {
    if (rest.length > prefix.length && rest.startsWith(prefix)) {
      const alias = aliasOf(rest.slice(prefix.length));
      return alias ? { format, slug: m[1]!, action: 'model', alias } : undefined;
    }
  }
  return undefined;
}

/**
 * The format to answer an unroutable path in: the one its path marks
 * (`/anthropic/…`, `/v1/responses`), else the pivot's (OpenAI's shape).
 */
export function formatOfPath(path: string): WireFormat {
  return WIRE_FORMATS.find((f) => WIRE[f].edge.pathMark?.test(path)) ?? PIVOT;
}

/** A HEAD on a format's base (`/{ws}/v1`, `/{ws}/anthropic`, `/{ws}/anthropic/v1`), or a HEAD or GET of its `api/hello`: a connectivity probe. */
export function isBaseProbe(method: string | undefined, path: string): boolean {
  if (method === 'HEAD') return BASE.test(path) || HELLO.test(path);
  return method === 'GET' && HELLO.test(path);
}
