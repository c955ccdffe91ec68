import type { IncomingHttpHeaders } from 'node:http';
import type { ProxySettings } from '../../shared/config.js';
import type { ModelConfig, ProviderConfig } from '../../shared/models.js';
import type { ParsedCall, WireFormat } from '../call.js';
import { parseCall } from '../wire/parse.js';
import { countTokensCall, upstreamCall, type UpstreamCall } from '../wire/upstream.js';
import { answerTranslator, translateCall } from '../translate/index.js';
import { PIVOT } from '../wire/registry.js';
import { estimateChatTokens } from '../wire/messages/count-tokens.js';
import type { CountCall, ParsedSummary, PlannedCall, PlannedCount } from './jobs.js';
import { bufferOf, createBodyPool, type Worked } from './pool.js';

/**
 * The CPU work a request body costs — JSON parse, depth and format checks,
 * translation, serialization, a local token count — done on the event loop
 * for a body under `offloadBytes` (a few milliseconds at most) and in a
 * worker thread for a larger one, so no single request holds the loop
 * (docs/security.md). A large body's call keeps only its top level on the
 * main thread (`ParsedCall.partial`); each later step that needs the whole
 * body sends its raw bytes to a worker again.
 */
export interface BodyWork {
  parse(format: WireFormat, raw: Buffer, headers: IncomingHttpHeaders, purpose?: 'call' | 'count'): ParsedCall | Promise<ParsedCall>;
  /** The provider's request (wire/upstream.ts `upstreamCall`). */
  plan(
    format: WireFormat,
    call: ParsedCall,
    model: ModelConfig,
    provider: ProviderConfig,
    headers: IncomingHttpHeaders,
  ): UpstreamCall | Promise<UpstreamCall>;
  /** A token count estimated here, over the call's Chat Completions translation (wire/messages/count-tokens.ts). */
  countLocally(format: WireFormat, call: ParsedCall, model: ModelConfig, headers: IncomingHttpHeaders): Promise<number>;
  /** The provider's token-counting request (wire/upstream.ts `countTokensCall`). */
  countCall(
    format: WireFormat,
    call: ParsedCall,
    model: ModelConfig,
    provider: ProviderConfig,
    headers: IncomingHttpHeaders,
  ): CountCall | undefined | Promise<CountCall | undefined>;
  close(): Promise<void>;
}

interface BodyWorkOptions {
  /** Bodies of at least this many bytes are worked on in a worker. */
  offloadBytes: number;
  threads: number;
  queueMax: number;
  deadlineMs: number;
  /** Tokenizer time one local count may take before the rest is estimated from length (token-estimate.ts). */
  countBudgetMs: number;
}

/**
 * The workers' bounds besides the settings: a queue long enough for bursts
 * of large calls (each waits its turn; nothing is copied until a worker
 * takes it), a deadline far above the ~1.5 s the largest body takes on a
 * loaded core, and the tokenizer time one local count may use before the
 * rest is estimated from length.
 */
const BOUNDS = { queueMax: 256, deadlineMs: 30_000, countBudgetMs: 100 };

/** The proxy's body work, sized by its settings (PROXY_OFFLOAD_BODY_BYTES, PROXY_BODY_WORKERS). */
export function bodyWorkOf(settings: Pick<ProxySettings, 'offloadBodyBytes' | 'bodyWorkers'>): BodyWork {
  return createBodyWork({ ...BOUNDS, offloadBytes: settings.offloadBodyBytes, threads: settings.bodyWorkers });
}

function createBodyWork(options: BodyWorkOptions): BodyWork {
  const pool = createBodyPool(options);
  /** A worker's answer for `call`: its bytes, moved to the worker for the job, are the call's again. */
  const resultFor = (call: ParsedCall, worked: Worked): unknown => {
    call.raw = worked.raw;
    return worked.result;
  };
  const base = (format: WireFormat, call: ParsedCall, headers: IncomingHttpHeaders, purpose: 'call' | 'count' = 'call') => ({
    format,
    raw: call.raw,
    headers,
    purpose,
  });
  return {
    parse(format, raw, headers, purpose = 'call') {
      if (raw.length < options.offloadBytes) return parseCall(format, raw, headers, purpose);
      return pool.run({ kind: 'parse', format, raw, headers, purpose }).then((worked) => ({ ...(worked.result as ParsedSummary), raw: worked.raw }));
    },
    plan(format, call, model, provider, headers) {
      if (!call.partial) return upstreamCall(format, call, model, provider);
      return pool.run({ kind: 'plan', ...base(format, call, headers), model, provider }).then((worked) => {
        const planned = resultFor(call, worked) as PlannedCall;
        const translate = planned.format === format ? undefined : answerTranslator(format, planned.format, call, model);
        return { ...planned, body: bufferOf(planned.body), translate };
      });
    },
    async countLocally(format, call, model, headers) {
      if (!call.partial) return estimateChatTokens(translateCall(format, PIVOT, call, model).request);
      return resultFor(
        call,
        await pool.run({ kind: 'count', ...base(format, call, headers, 'count'), model, budgetMs: options.countBudgetMs }),
      ) as number;
    },
    countCall(format, call, model, provider, headers) {
      if (!call.partial) return countTokensCall(format, call, model, provider);
      return pool.run({ kind: 'count-call', ...base(format, call, headers, 'count'), model, provider }).then((worked) => {
        const planned = resultFor(call, worked) as PlannedCount | undefined;
        return planned && { ...planned, body: bufferOf(planned.body) };
      });
    },
    close: () => pool.close(),
  };
}
