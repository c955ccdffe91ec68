import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Logger } from '../shared/logger.js';
import { isObject } from '../shared/json.js';

/**
 * Which workspace each Responses response id was issued to (docs/security.md,
 * round two, finding 4). A provider that stores responses lets anyone holding
 * an id and the operator's provider key continue, and so read, that
 * conversation; the proxy holds that key for every tenant, so it forwards a
 * `previous_response_id` only for the workspace the id was issued to. An id it
 * does not know (never seen, expired, evicted) is refused as well: failing
 * closed is the only answer that cannot hand one tenant's conversation to another.
 */
export interface ResponseIds {
  /** `id` was issued to `workspaceId`: remembered for the TTL (in Redis too, when the proxies share one). */
  record(id: string, workspaceId: string): void;
  /** The workspace `id` was issued to, if remembered; a promise only when Redis must be asked. */
  ownerOf(id: string): string | undefined | Promise<string | undefined>;
}

/** In this process only: at most `max` ids (the least recently used go first), each for `ttlMs`. */
export function createLocalResponseIds(max: number, ttlMs: number): ResponseIds & { local: LRUCache<string, string> } {
  const local = new LRUCache<string, string>({ max, ttl: ttlMs });
  return {
    local,
    record(id, workspaceId) {
      local.set(id, workspaceId);
    },
    ownerOf: (id) => local.get(id),
  };
}

/**
 * Shared by every proxy: `{prefix}:response:{sha256 of the id}` → workspace id,
 * expiring with the TTL; this process's own map is read first, so a
 * conversation continued on the proxy that began it asks Redis nothing. The id
 * is hashed: whoever reads Redis learns no id to continue a conversation with.
 * While Redis is down only this process's ids are known, and others are refused.
 */
export function createRedisResponseIds(redis: Redis, prefix: string, max: number, ttlSeconds: number, logger: Logger): ResponseIds {
  const local = createLocalResponseIds(max, ttlSeconds * 1000);
  const key = (id: string) => `${prefix}:response:${createHash('sha256').update(id).digest('base64url')}`;
  let failing = false;
  const down = (err: unknown): undefined => {
    if (!failing) logger.warn({ err: (err as Error).message }, 'response ids: Redis unavailable, only this proxy’s own are known meanwhile');
    failing = true;
    return undefined;
  };
  return {
    record(id, workspaceId) {
      local.record(id, workspaceId);
      if (redis.status !== 'ready') return;
      redis.set(key(id), workspaceId, 'EX', ttlSeconds).catch(down);
    },
    ownerOf(id) {
      const mine = local.ownerOf(id);
      if (mine !== undefined || redis.status !== 'ready') return mine;
      return redis.get(key(id)).then((v) => {
        failing = false;
        if (v === null) return undefined;
        local.record(id, v);
        return v;
      }, down);
    },
  };
}

/** The largest whole answer read for its id (the usage tap keeps as much). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * Reads the response id off a Responses answer as it passes, made only for a
 * call whose response the provider may store: from a stream's
 * `response.created` event (the first), or from a whole answer's top-level `id`.
 */
export class ResponseIdReader {
  private id: string | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private parser: EventSourceParser | undefined;
  private readonly decoder = new TextDecoder();

  feed(chunk: Buffer, eventStream: boolean): void {
    if (this.id !== undefined) return;
    if (eventStream) {
      this.parser ??= createParser({ onEvent: (e) => this.onEvent(e.event, e.data) });
      this.parser.feed(this.decoder.decode(chunk, { stream: true }));
      return;
    }
    this.size += chunk.length;
    if (this.size <= MAX_ANSWER_BYTES) this.chunks.push(chunk);
  }

  private onEvent(name: string | undefined, data: string): void {
    if (this.id !== undefined || (name !== undefined && name !== 'response.created')) return;
    const event = parse(data);
    if (isObject(event) && isObject(event.response)) this.id = idOf(event.response);
  }

  /** The id, once the answer is over (a whole answer is parsed only then). */
  responseId(): string | undefined {
    if (this.id === undefined && this.chunks.length && this.size <= MAX_ANSWER_BYTES) {
      this.id = idOf(parse(Buffer.concat(this.chunks).toString('utf8')));
      this.chunks.length = 0;
    }
    return this.id;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function idOf(response: unknown): string | undefined {
  return isObject(response) && typeof response.id === 'string' && response.id !== '' ? response.id : undefined;
}
