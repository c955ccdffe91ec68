import { parentPort } from 'node:worker_threads';
import { AppError } from '../../shared/errors.js';
import { parseCall } from '../wire/parse.js';
import { countTokensCall, upstreamCall } from '../wire/upstream.js';
import { countWithinBudget } from '../token-estimate.js';
import { translateCall } from '../translate/index.js';
import { PIVOT } from '../wire/registry.js';
import { chatTexts } from '../wire/messages/count-tokens.js';
import { skeletonOf, type ParsedSummary, type PlannedCall, type PlannedCount, type WorkAnswer, type WorkJob, type WorkRequest } from './jobs.js';

/**
 * A body worker (started by pool.ts): the same parse, checks, translation
 * and token count the main thread runs for a small body, run here for a
 * large one. Errors travel back as their kind and message and are thrown
 * again on the main thread, so the caller gets the same answer either way.
 */

type Counter = (text: string) => number;
let counter: Counter | undefined;

/** o200k_base builds ~2 MB of tables when loaded (~450 ms): only in a worker that counts. */
async function tokenCounter(): Promise<Counter> {
  counter ??= (await import('gpt-tokenizer/encoding/o200k_base')).countTokens;
  return counter;
}

/** A buffer the answer can hand over without a copy: its own whole ArrayBuffer. */
function owned(body: Buffer): Uint8Array {
  return body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
}

async function run(job: WorkJob): Promise<unknown> {
  const call = parseCall(job.format, Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength), job.headers, job.purpose);
  switch (job.kind) {
    case 'parse': {
      const summary: ParsedSummary = { ...call, body: skeletonOf(job.format, call.body), partial: true };
      delete (summary as { raw?: unknown }).raw;
      return summary;
    }
    case 'plan': {
      const { translate: _answer, body, ...rest } = upstreamCall(job.format, call, job.model, job.provider);
      const planned: PlannedCall = { ...rest, body: owned(body) };
      return planned;
    }
    case 'count': {
      const { fixed, texts } = chatTexts(translateCall(job.format, PIVOT, call, job.model).request);
      return fixed + countWithinBudget(texts, await tokenCounter(), job.budgetMs);
    }
    case 'count-call': {
      const up = countTokensCall(job.format, call, job.model, job.provider);
      if (!up) return undefined;
      const planned: PlannedCount = { ...up, body: owned(up.body) };
      return planned;
    }
  }
}

parentPort?.on('message', (request: WorkRequest) => {
  const raw = request.job.raw;
  const back = [raw.buffer as ArrayBuffer];
  run(request.job).then(
    (result) => {
      const body = (result as { body?: unknown } | undefined)?.body;
      const answer: WorkAnswer = { id: request.id, raw, result };
      parentPort?.postMessage(answer, body instanceof Uint8Array && body.buffer !== raw.buffer ? [...back, body.buffer as ArrayBuffer] : back);
    },
    (err: unknown) => {
      const e = err instanceof AppError ? err : undefined;
      const answer: WorkAnswer = {
        id: request.id,
        raw,
        error: { kind: e?.kind, message: err instanceof Error ? err.message : String(err), code: e?.code, headers: e?.headers },
      };
      parentPort?.postMessage(answer, back);
    },
  );
});
