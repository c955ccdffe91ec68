/*
 * Small fakes for one edge step at a time: a request that is only a stream
 * with headers, deps whose parts record what a step asked of them, and a
 * call state as the steps before the one under test would have left it.
 */
import { createUpstreamAuth } from '../../../../proxy/upstream-auth/index.js';
import { createUsageWarnings } from '../../../../proxy/money/usage-warnings.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import type { ResolvedKey } from '../../../../shared/contract/keys.js';
import type { Usage, WireFormat } from '../../../../proxy/call.js';
import { parseCall } from '../../../../proxy/wire/index.js';
import type { Lookup } from '../../../../proxy/key-cache.js';
import type { HoldOutcome, HoldStore, MoneySnapshot } from '../../../../proxy/money/holds.js';
import type { HeldCall, Metering } from '../../../../proxy/money/metering.js';
import type { RefusedCall } from '../../../../proxy/money/refusals.js';
import { newCall, type EdgeCall } from '../../../../proxy/observe.js';
import type { LimitOutcome } from '../../../../proxy/rate-limits.js';
import { createRouting } from '../../../../proxy/routing/index.js';
import { bodyWorkOf } from '../../../../proxy/body-work/index.js';
import { createAbandonedReads } from '../../../../proxy/abandoned.js';
import { createLocalResponseIds } from '../../../../proxy/response-ids.js';
import { newCallState, type EdgeDeps, type Modelled, type Parsed, type Planned } from '../../../../proxy/edge/steps/step.js';
import { testConfig } from '../../../support/control-plane.js';
import { resolvedKey as baseKey } from '../../../support/keys.js';

export const NOW = Date.parse('2026-01-01T00:00:00Z');

/** The key the step tests call with: its own ids, the models the fixtures' providers serve, money to spare. */
export function resolvedKey(over: Partial<ResolvedKey> = {}): ResolvedKey {
  return baseKey({ id: 'k1', workspace_id: 'w1', models: ['tg/sonnet', 'tg/gpt-direct', 'tg/claude-direct'], balance_micros: 10_000_000, ...over });
}

/** A request as far as the steps read one: headers, raw headers and a body stream (end it to finish the body). */
export function fakeRequest(headers: Record<string, string> = {}): IncomingMessage & PassThrough {
  const req = new PassThrough() as unknown as IncomingMessage & PassThrough;
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flat();
  return req;
}

export function fakeTiming(): EdgeCall {
  return newCall('req-1');
}

/** What the fake parts were asked, in order. */
export interface Asked {
  lookups: string[];
  holds: { requestId: string; snapshot: MoneySnapshot; amount: number }[];
  admitted: HeldCall[];
  settled: { call: HeldCall; usage: Usage; format: WireFormat; status: number | undefined }[];
  released: { call: HeldCall; status: number }[];
  refused: RefusedCall[];
  limits: { keyId: string; rpm: number | null; tpm: number | null; tokens: number }[];
  warnings: string[];
  errors: string[];
}

export interface FakeAnswers {
  /** What the key cache holds (`cached`), and what a lookup answers. */
  cached?: Lookup | undefined;
  lookup?: Lookup;
  limit?: LimitOutcome | Promise<LimitOutcome>;
  hold?: () => HoldOutcome | Promise<HoldOutcome>;
  full?: boolean;
  costBilled?: number;
}

export function fakeDeps(answers: FakeAnswers = {}): { deps: EdgeDeps; asked: Asked } {
  const asked: Asked = { lookups: [], holds: [], admitted: [], settled: [], released: [], refused: [], limits: [], warnings: [], errors: [] };
  const logger = pino({ level: 'warn' }, { write: (line: string) => void line });
  logger.warn = ((_obj: unknown, msg: string) => void asked.warnings.push(msg)) as typeof logger.warn;
  logger.error = ((_obj: unknown, msg: string) => void asked.errors.push(msg)) as typeof logger.error;
  const holds: HoldStore = {
    hold(requestId, snapshot, amount) {
      asked.holds.push({ requestId, snapshot, amount });
      return answers.hold ? answers.hold() : { ok: true };
    },
    release: () => undefined,
    resize: () => undefined,
    extend: () => Promise.resolve(),
    reassert: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  const metering: Metering = {
    start: () => Promise.resolve(),
    admitted: (call) => void asked.admitted.push(call),
    settle(call, usage, format, status) {
      asked.settled.push({ call, usage, format, status });
      return answers.costBilled ?? 0;
    },
    release: (call, status) => void asked.released.push({ call, status }),
    refused: (call) => void asked.refused.push(call),
    full: () => answers.full ?? false,
    wake: () => undefined,
    drain: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  const config = testConfig();
  const deps: EdgeDeps = {
    config,
    logger,
    authorizers: { of: () => undefined },
    usageWarnings: createUsageWarnings(logger),
    upstreamAuth: createUpstreamAuth({}, logger),
    routing: createRouting(config.proxy, undefined, undefined, Date.now, logger),
    bodies: bodyWorkOf(config.proxy),
    abandoned: createAbandonedReads(config.proxy.abandonedReadsMax, config.proxy.abandonedReadMs),
    responseIds: createLocalResponseIds(100, 60_000),
    keys: {
      cached: () => answers.cached,
      lookup(hash: string) {
        asked.lookups.push(hash);
        return Promise.resolve(answers.lookup ?? { kind: 'unknown' });
      },
      invalidate: () => undefined,
      markSuspect: () => undefined,
      oldestVersion: () => undefined,
      size: () => 0,
      stats: { hit: 0, miss: 0, stale: 0, unavailable: 0 },
    },
    limits: {
      admit(keyId, rpm, tpm, tokens) {
        asked.limits.push({ keyId, rpm, tpm, tokens });
        return answers.limit ?? { ok: true };
      },
      adjustTokens: () => undefined,
    },
    holds,
    metering,
    pool: () => {
      throw new Error('no pool in a step test');
    },
    observe: { begin: () => fakeTiming(), upstream: () => undefined, end: () => undefined, close: () => Promise.resolve() },
    now: () => NOW,
  };
  return { deps, asked };
}

type StateOptions = { format?: WireFormat; body?: Record<string, unknown>; key?: ResolvedKey; headers?: Record<string, string> };

/** A call state as the key and parse steps would leave it: the key admitted, the body parsed. */
export function parsedState(opts: StateOptions = {}): Parsed {
  const format = opts.format ?? 'chat';
  const headers = opts.headers ?? (format === 'messages' ? { 'anthropic-version': '2023-06-01' } : {});
  const req = fakeRequest(headers);
  const body = opts.body ?? { model: 'tg/sonnet', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
  return {
    ...newCallState(req, {} as ServerResponse, { format, slug: 'acme', action: 'call' }, fakeTiming()),
    key: opts.key ?? resolvedKey(),
    call: parseCall(format, Buffer.from(JSON.stringify(body)), headers),
  };
}

/** A call state as the admission steps before the access step would leave it (the body parsed, the model found). */
export function stateAfter(deps: EdgeDeps, opts: StateOptions = {}): Modelled {
  const s = parsedState(opts);
  const model = deps.config.models.models.get(s.call.alias);
  const provider = model && deps.config.models.providers.get(model.provider);
  if (!model || !provider) throw new Error(`the fixtures have no model ${s.call.alias}`);
  return { ...s, model, provider };
}

/** A call state with its provider's request planned, as the access step leaves it. */
export function plannedState(deps: EdgeDeps, opts: StateOptions = {}): Planned {
  const s = stateAfter(deps, opts);
  const up = deps.bodies.plan(s.route.format, s.call, s.model, s.provider, s.req.headers);
  if (up instanceof Promise) throw new Error('a fake call is small enough to plan at once');
  return { ...s, up };
}

/** A hold as far as the steps after the hold step read one. */
export const fakeHeld = (): HeldCall => ({ requestId: 'req-1' }) as HeldCall;
