import type { ParsedCall } from '../call.js';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Session affinity: prompt caches, encrypted reasoning and stored responses
 * belong to one provider account, so the calls of one session go to the
 * deployment that served its first call while that one is healthy. Per
 * process and bounded here (least recently used out first); shared by every
 * proxy through Redis in `affinity-redis.ts`. Losing an entry costs a cache
 * miss, never a wrong answer.
 */
export interface Affinity {
  /** The deployment index this session was served by, if remembered (a promise when it is asked of Redis). */
  get(alias: string, session: string): number | undefined | Promise<number | undefined>;
  set(alias: string, session: string, index: number): void;
}

export function createAffinity(maxEntries: number): Affinity & { get(alias: string, session: string): number | undefined } {
  const map = new Map<string, number>();
  return {
    get(alias, session) {
      const k = `${alias}\n${session}`;
      const index = map.get(k);
      if (index !== undefined) {
        // Refreshed: a Map iterates in insertion order, so the oldest is first.
        map.delete(k);
        map.set(k, index);
      }
      return index;
    },
    set(alias, session, index) {
      const k = `${alias}\n${session}`;
      map.delete(k);
      map.set(k, index);
      if (map.size > maxEntries) map.delete(map.keys().next().value!);
    },
  };
}

/**
 * What names a session: Claude Code's session header, Codex's
 * `prompt_cache_key`, or the Responses `previous_response_id` a call
 * continues, within the caller's workspace: a session name is the client's to
 * choose, so another tenant naming the same one must not steer (or learn from
 * the latency of) this workspace's pinning. Undefined for a call that names none.
 */
export function sessionOf(headers: IncomingHttpHeaders, call: ParsedCall, workspaceId: string): string | undefined {
  const header = headers['x-claude-code-session-id'];
  if (typeof header === 'string' && header) return `${workspaceId}\ns:${header}`;
  const body = call.body;
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key) return `${workspaceId}\nc:${body.prompt_cache_key}`;
  if (typeof body.previous_response_id === 'string' && body.previous_response_id) return `${workspaceId}\nr:${body.previous_response_id}`;
  return undefined;
}
