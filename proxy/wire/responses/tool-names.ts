import { isObject } from '../../../shared/json.js';
import { createHash } from 'node:crypto';
import { type Json } from './json.js';

/**
 * Chat Completions knows only flat function tools named by
 * `^[a-zA-Z0-9_-]{1,64}$`. A Responses `namespace` tool (a group of MCP
 * tools) is flattened into one function per member named `ns__tool`, and a
 * `custom` (free-form) tool becomes a function taking one string `input`.
 * A name that breaks Chat's rules is cleaned, and shortened with a hash
 * suffix when too long, so two tools never share a name. The map is rebuilt
 * from the request wherever an answer is translated: no state to keep.
 */

export interface ToolOrigin {
  /** The name the client knows. */
  name: string;
  /** The namespace it was declared in, if any. */
  namespace?: string;
  /** A free-form tool: its call carries `input` text, not JSON arguments. */
  custom: boolean;
}

export interface ToolNames {
  /** Flat Chat name → what the client declared. */
  origins: Map<string, ToolOrigin>;
  /** The client's (namespace, name) → the flat Chat name. */
  flat(name: string, namespace?: string): string;
}

const MAX_NAME = 64;
const SEPARATOR = '__';

function key(name: string, namespace: string | undefined): string {
  return namespace === undefined ? name : `${namespace}\u0000${name}`;
}

/** `raw` in Chat's charset, within its length limit; a hash of `raw` keeps shortened names apart. */
export function chatToolName(raw: string): string {
  const clean = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (clean === raw && clean.length <= MAX_NAME && clean.length > 0) return clean;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
}

function joined(name: string, namespace: string | undefined): string {
  if (namespace === undefined) return name;
  // Codex's MCP namespaces end in `__` already (`mcp__server__`); don't double it.
  return namespace.endsWith(SEPARATOR) || name.startsWith('_') ? `${namespace}${name}` : `${namespace}${SEPARATOR}${name}`;
}

/** The flat names of every tool a request declares (functions, custom tools and namespace members). */
export function toolNames(tools: readonly unknown[] | undefined): ToolNames {
  const origins = new Map<string, ToolOrigin>();
  const byKey = new Map<string, string>();
  const add = (tool: Json, namespace: string | undefined): void => {
    if (typeof tool.name !== 'string') return;
    const k = key(tool.name, namespace);
    if (byKey.has(k)) return;
    let flat = chatToolName(joined(tool.name, namespace));
    // Two declared names that clean to one: the later one gets a hash of its full identity.
    if (origins.has(flat)) flat = chatToolName(`${joined(tool.name, namespace)}#${origins.size}`);
    byKey.set(k, flat);
    origins.set(flat, { name: tool.name, ...(namespace === undefined ? {} : { namespace }), custom: tool.type === 'custom' });
  };
  for (const tool of tools ?? []) {
    if (!isObject(tool)) continue;
    if (tool.type === 'function' || tool.type === 'custom') add(tool, undefined);
    else if (tool.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      for (const member of tool.tools) if (isObject(member)) add(member, tool.name);
    }
  }
  return {
    origins,
    flat: (name, namespace) => byKey.get(key(name, namespace)) ?? chatToolName(joined(name, namespace)),
  };
}

/** A flat Chat tool name back to what the client declared; a name it never declared is passed as it is. */
export function originOf(names: ToolNames, flat: string): ToolOrigin {
  return names.origins.get(flat) ?? { name: flat, custom: false };
}
