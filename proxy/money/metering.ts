import type { UsageKeyMoney, UsageReport } from '../../shared/contract/usage.js';
import type { NowMs } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { ModelConfig } from '../../shared/models.js';
import type { ControlPlaneClient } from '../control-plane-client.js';
import type { Usage, UsageFormat, WireFormat } from '../call.js';
import type { HoldStore } from './holds.js';
import { liveHold } from './snapshot.js';
import type { HoldKeepAlive } from './keep-alive.js';
import type { Outbox } from './outbox.js';
import { reportJson } from './record-json.js';
import { createSettlementBatcher, type SettlementBatcher } from './batcher.js';
import { watchOutboxDisk, type OutboxDisk } from './outbox-disk.js';
import { releaseBatch } from './hold-release.js';
import { createUsageReporter, type UsageReporter } from './reporter.js';
import { createRefusalCounter, type RefusalCounter, type RefusedCall } from './refusals.js';
import { createInFlight, settlementOf, type InFlight, type Settlement } from './settlement.js';
import { callCost, type CallCost } from './cost.js';
import type { RateLimits } from '../rate-limits.js';

export interface HeldCall {
  requestId: string;
  keyId: string;
  workspaceId: string;
  tpm: number | null;
  model: ModelConfig;
  holdMicros: number;
  inputEstimate: number;
  /** Tokens taken from the TPM window at admission. */
  tokensTaken: number;
  /** The key has a budget (its hold is on the key's account too). */
  keyBudget: boolean;
  /** The deployment that served the call (`provider/upstream_model`), once one answered. */
  deployment?: string | undefined;
  /** The wire format the client used, and when the proxy received the call (performance.now()). */
  format: UsageFormat;
  startedMs: number;
  /** When the hold was taken, epoch ms on the proxy's clock: the budget period the call's cost settles into. */
  heldAtMs?: number | undefined;
}

export interface MeteringDeps {
  cp: Pick<ControlPlaneClient, 'reportUsage'>;
  holds: HoldStore;
  limits: RateLimits;
  logger: Logger;
  outbox: Outbox;
  live: HoldKeepAlive;
  /** The longest wait between retries of a failed report; retries never stop. */
  retryMaxMs: number;
  /** Unacknowledged settlements at which new calls are refused (503) rather than served unbilled. */
  maxPending: number;
  /** How often a disk that refused an outbox write is tried again (default 250 ms). */
  diskProbeMs?: number;
  /** The proxy's clock (epoch ms): which budget period a settlement answer's figures are for. */
  now?: NowMs;
}

/**
 * Settles held calls: bill once, then release. Reports go to the control
 * plane in batches, group-commit style: while a batch is in flight the next
 * one gathers, so the ledger takes one transaction per batch, not per call.
 *
 * Each gathered batch is written to the outbox (one durable write) before
 * it is sent, and leaves it only once the control plane has recorded it; a
 * report is idempotent on its request id, so a failed batch is retried
 * whole, for as long as it takes, backing off up to `retryMaxMs` and starting
 * again at once on `wake()` (the control plane is back). Its holds stay in
 * place meanwhile (they still count against the money) and are released with
 * the control plane's new snapshot (docs/design.md, money).
 */
export interface Metering {
  /** Replays what an earlier run left unacknowledged: its holds go back first, so they count before any admission. */
  start(): Promise<void>;
  /** A call was admitted with this hold: it is owed until released or acknowledged. */
  admitted(call: HeldCall): void;
  /**
   * Bills reported (or, for a cut-short call, estimated) usage, priced in the
   * format the provider reported it in, whatever it costs (above the hold
   * too); the call's hold becomes that cost until the ledger has it. Never
   * zero tokens: at least one input token. Returns the cost billed, µ$ rounded up.
   */
  settle(call: HeldCall, usage: Usage, format: WireFormat, status?: number): number;
  /** Not billed (`status` is what the client got): the hold goes now; the call is recorded at no cost. */
  release(call: HeldCall, status: number): void;
  /** The proxy refused a call of a known key before holding anything: counted, and reported in groups at no cost (refusals.ts). */
  refused(call: RefusedCall): void;
  /**
   * Usage cannot be recorded safely: too many settlements wait for the
   * control plane, or the outbox's disk refused a write (full). New calls
   * are refused rather than served unbilled.
   */
  full(): boolean;
  /** The control plane is reachable again: retry now, and start the backoff over. */
  wake(): void;
  /** Waits until every settlement so far is recorded and released (tests). */
  drain(): Promise<void>;
  /** Shutdown: writes what has gathered, tries for up to `ms` to have the control plane take everything, then stops. */
  close(ms: number): Promise<void>;
}

/** A recorded batch's records leave the outbox, counted per segment (a segment goes once all its records have). */
async function ackSegments(outbox: Outbox, logger: Logger, batch: Settlement[]): Promise<void> {
  const acks = new Map<number, number>();
  for (const s of batch) if (s.slot) acks.set(s.slot.segment, (acks.get(s.slot.segment) ?? 0) + 1);
  for (const [segment, count] of acks) {
    await outbox.ack({ segment }, count).catch((err: unknown) => logger.warn({ err }, 'outbox cleanup failed'));
  }
}

/** The TPM window keeps the admission estimate instead of the real count; it rolls over within the minute. */
function tokenWindowNotCorrected(logger: Logger, call: HeldCall) {
  return (err: unknown) => logger.warn({ err: (err as Error).message, requestId: call.requestId }, 'token window correction failed');
}

/** A call's usage report: billed (`usage` and `cost`) or recorded at no cost. */
function reportOf(call: HeldCall, usage: Usage | undefined, cost: CallCost | undefined, status: number): UsageReport {
  const report: UsageReport = {
    request_id: call.requestId,
    key_id: call.keyId,
    model: call.model.alias,
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cost_micros: cost?.costMicros ?? 0,
    // The request detail for the usage console.
    format: call.format,
    status,
    latency_ms: Math.max(0, Math.round(performance.now() - call.startedMs)),
    started_at_ms: Math.round(performance.timeOrigin + call.startedMs),
    deployment: call.deployment,
    held_at_ms: call.heldAtMs,
  };
  if (usage && cost) {
    report.cache_read_tokens = usage.cacheReadTokens;
    report.cache_write_tokens = usage.cacheWrite5mTokens + usage.cacheWrite1hTokens;
    report.cache_write_1h_tokens = usage.cacheWrite1hTokens;
    report.web_search_requests = usage.webSearchRequests;
    report.cost_femtos = String(cost.costFemtos);
    report.cache_saved_femtos = String(cost.savedFemtos);
  }
  return report;
}

/** The records of a batch that are settled calls (owed until recorded), not refusals. */
function settlements(batch: readonly { refusal?: boolean }[]): number {
  let n = 0;
  for (const s of batch) if (!s.refusal) n++;
  return n;
}

/**
 * Refusals ride the same batches, outbox and reporter as settlements, but
 * are not owed: a flood of them never makes the proxy refuse calls for want
 * of settlement room (`full`).
 */
function refusalsThrough(batcher: SettlementBatcher, logger: Logger): RefusalCounter {
  return createRefusalCounter({
    logger,
    report(report, workspaceId) {
      const json = reportJson(report);
      batcher.add({ json, requestId: report.request_id, keyId: report.key_id, workspaceId, keyBudget: false, recordOnly: true, refusal: true });
    },
  });
}

export function createMetering(deps: MeteringDeps): Metering {
  const { logger, outbox } = deps;
  const inFlight = createInFlight();
  const disk = watchOutboxDisk(outbox, logger, deps.diskProbeMs ?? 250);
  // The reporter's callback reads `st`, which is whole before any report can be recorded.
  const reporter = createUsageReporter({
    cp: deps.cp,
    logger,
    inFlight,
    retryMaxMs: deps.retryMaxMs,
    recorded: (batch, money) => recorded(st, batch, money),
  });
  const batcher = createSettlementBatcher({ outbox, logger, inFlight, written: (batch) => reporter.queue(batch), stored: disk.stored });
  const st: MeteringState = { deps, inFlight, disk, reporter, batcher, refusals: refusalsThrough(batcher, logger), owed: 0 };

  return {
    start: () => replay(st),
    admitted(call: HeldCall): void {
      deps.live.add(liveHold(call.requestId, call.workspaceId, call.keyId, call.holdMicros, call.keyBudget));
    },
    settle: (call, reported, format, status = 200) => settle(st, call, reported, format, status),
    release: (call, status) => release(st, call, status),
    refused: (call) => st.refusals.count(call),
    full: (): boolean => disk.refused() || st.owed >= deps.maxPending,
    wake: () => st.reporter.wake(),
    drain: () => drain(st),
    close: (ms) => close(st, ms),
  };
}

/** One metering's state, handed to the helpers below. */
interface MeteringState {
  deps: MeteringDeps;
  inFlight: InFlight;
  disk: OutboxDisk;
  reporter: UsageReporter;
  batcher: SettlementBatcher;
  refusals: RefusalCounter;
  /** Settled and not yet acknowledged by the control plane. */
  owed: number;
}

/**
 * The control plane recorded a batch: its holds go (each adopting its key's
 * money after the batch, one snapshot per key), then its records leave the outbox.
 */
async function recorded(st: MeteringState, batch: Settlement[], money: UsageKeyMoney[]): Promise<void> {
  const { holds, live, logger, outbox } = st.deps;
  st.owed -= settlements(batch);
  await releaseBatch(holds, live, logger, batch, money, (st.deps.now ?? Date.now)());
  await ackSegments(outbox, logger, batch);
}

/** Replays what an earlier run left unacknowledged: its holds go back first, so they count before any admission. */
async function replay(st: MeteringState): Promise<void> {
  const { outbox, live, holds, logger } = st.deps;
  const replayed = outbox.replayed;
  if (!replayed.length) return;
  for (const { record } of replayed) {
    if (record.recordOnly) continue;
    live.add(liveHold(record.report.request_id, record.workspaceId, record.report.key_id, record.report.cost_micros, record.keyBudget));
  }
  await holds.reassert(live.list());
  st.owed += settlements(replayed.map(({ record }) => ({ refusal: record.report.refusal_reason !== undefined })));
  logger.info({ requests: replayed.length }, 'replaying unacknowledged usage from the outbox');
  // Replayed records have waited long enough already.
  st.reporter.queue(replayed.map(({ record, slot }) => ({ ...settlementOf(record, slot), queuedAt: -Infinity })));
}

/** Adds one call's usage record to the batch being gathered; a record-only one (not billed) holds nothing. */
function gather(st: MeteringState, call: HeldCall, usage: Usage | undefined, cost: CallCost | undefined, status: number): void {
  st.owed++;
  const report = reportOf(call, usage, cost, status);
  // Serialized once, now: the report object dies young; its text goes to disk and to the control plane.
  st.batcher.add({
    json: reportJson(report),
    requestId: call.requestId,
    keyId: call.keyId,
    workspaceId: call.workspaceId,
    keyBudget: call.keyBudget,
    recordOnly: !(usage && cost),
  });
}

/** The hold of a call that ended becomes what it cost: no more (it shrinks), or all of it (it grows). */
function holdTheCost(st: MeteringState, call: HeldCall, costMicros: number): void {
  st.deps.live.resize(call, costMicros);
  const ids = { workspaceId: call.workspaceId, keyId: call.keyId };
  const resized = st.deps.holds.resize(call.requestId, ids, costMicros);
  // A failed resize leaves the worst case held: the money stays covered, only admission is stricter until the release.
  resized?.catch((err: unknown) => st.deps.logger.warn({ err, requestId: call.requestId }, 'hold resize failed; the worst case stays held'));
}

/** Bills what the usage costs, even above the hold; the hold becomes that cost. Never zero tokens: at least one input token. */
function settle(st: MeteringState, call: HeldCall, reported: Usage, format: WireFormat, status: number): number {
  const prompt = reported.inputTokens + reported.cacheReadTokens + reported.cacheWrite5mTokens + reported.cacheWrite1hTokens;
  const usage = prompt > 0 ? reported : { ...reported, inputTokens: 1 };
  const cost = callCost(call.model, usage, format);
  holdTheCost(st, call, cost.costMicros);
  const counted = prompt + usage.outputTokens;
  void st.deps.limits
    .adjustTokens(call.keyId, call.tpm, Math.max(1, counted) - call.tokensTaken)
    ?.catch(tokenWindowNotCorrected(st.deps.logger, call));
  gather(st, call, usage, cost, status);
  return cost.costMicros;
}

/**
 * Not billed: the upstream failed before answering (`status` is what the
 * client got), answered with its own error, or the proxy failed. The hold
 * goes now; the call is still recorded, at no cost, so the usage console
 * counts it.
 */
function release(st: MeteringState, call: HeldCall, status: number): void {
  const { live, limits, holds, logger } = st.deps;
  live.remove(call.requestId);
  gather(st, call, undefined, undefined, status);
  st.inFlight.track(
    (async () => {
      await limits.adjustTokens(call.keyId, call.tpm, -call.tokensTaken)?.catch(tokenWindowNotCorrected(logger, call));
      await holds.release(call.requestId, { workspaceId: call.workspaceId, keyId: call.keyId });
    })().catch((err: unknown) => logger.error({ err, requestId: call.requestId }, 'hold release failed; it will expire')),
  );
}

async function drain(st: MeteringState): Promise<void> {
  const { reporter, refusals, batcher, inFlight } = st;
  reporter.hurry(true);
  refusals.flush();
  try {
    while (batcher.busy() || reporter.queued() || inFlight.size()) {
      batcher.nudge();
      if (reporter.queued()) reporter.pump();
      if (inFlight.size()) await inFlight.settled();
      // A referenced timer: a process with nothing else on its loop (no server) must not end mid-drain.
      else await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    reporter.hurry(false);
  }
}

/**
 * Shutdown: writes what has gathered, tries for up to `ms` to have the
 * control plane take everything, then stops; what is left stays in the
 * outbox for the next start.
 */
async function close(st: MeteringState, ms: number): Promise<void> {
  const { reporter, refusals, batcher, inFlight, disk } = st;
  disk.stop();
  reporter.hurry(true);
  refusals.stop();
  batcher.flush();
  reporter.pump();
  const deadline = Date.now() + ms;
  // A report that failed is tried again every half second until the deadline, not on the backoff.
  for (let tick = 0; (reporter.queued() || inFlight.size()) && Date.now() < deadline; tick++) {
    if (tick % 25 === 0) reporter.wake();
    await new Promise((r) => setTimeout(r, 20).unref());
  }
  reporter.stop();
  await st.deps.outbox.close();
  if (reporter.unfinished()) st.deps.logger.warn({ requests: st.owed }, 'usage left in the outbox for the next start');
}
