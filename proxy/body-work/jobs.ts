import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorKind } from '../../shared/errors.js';
import type { ModelConfig, ProviderConfig } from '../../shared/models.js';
import type { ParsedCall, WireFormat } from '../call.js';
import type { UpstreamCall } from '../wire/upstream.js';
import { WIRE } from '../wire/registry.js';

/**
 * What the main thread asks a body worker (worker.ts) and what it answers.
 * Every job carries the raw body and the request's headers: the worker
 * parses and checks the body again rather than keeping it between jobs, so
 * no state lives in a worker and any worker can take any job.
 */

interface BodyJob {
  format: WireFormat;
  raw: Uint8Array;
  headers: IncomingHttpHeaders;
  purpose: 'call' | 'count';
}

export type WorkJob =
  | (BodyJob & { kind: 'parse' })
  | (BodyJob & { kind: 'plan'; model: ModelConfig; provider: ProviderConfig })
  | (BodyJob & { kind: 'count'; model: ModelConfig; budgetMs: number })
  | (BodyJob & { kind: 'count-call'; model: ModelConfig; provider: ProviderConfig });

/** A parsed call as the main thread keeps it: the body's top level, its conversation left out (`partial`). */
export type ParsedSummary = Omit<ParsedCall, 'raw'>;

/** The provider's request a worker planned: everything but the answer translator, which holds code and is made on the main thread. */
export type PlannedCall = Omit<UpstreamCall, 'translate' | 'body'> & { body: Uint8Array };

export type CountCall = Omit<UpstreamCall, 'dropUsageChunk' | 'translate' | 'dropped'>;
export type PlannedCount = Omit<CountCall, 'body'> & { body: Uint8Array };

export interface WorkRequest {
  id: number;
  job: WorkJob;
}

/** Every answer hands the job's `raw` back (moved, as it came). */
export type WorkAnswer =
  | { id: number; raw: Uint8Array; result: unknown }
  | {
      id: number;
      raw: Uint8Array;
      error: { kind: ErrorKind | undefined; message: string; code: string | undefined; headers: Record<string, string> | undefined };
    };

/**
 * The fields holding a call's conversation, by format: they are what makes a
 * body large, and nothing on the main thread reads them once the worker has
 * checked and translated the body (answer translators read only the top
 * level: tools, stop sequences, stream options, echoed settings).
 */

/** The body's top level with its conversation emptied: what the main thread keeps of a large body. */
export function skeletonOf(format: WireFormat, body: Record<string, unknown>): Record<string, unknown> {
  const top = { ...body };
  for (const field of WIRE[format].conversationFields) if (Array.isArray(top[field])) top[field] = [];
  return top;
}
