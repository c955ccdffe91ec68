import { USAGE_BATCH_MAX, type UsageResult } from '../../shared/contract/usage.js';
import type { Logger } from '../../shared/logger.js';
import type { ModelConfig } from '../../shared/models.js';
import { ControlPlaneUnavailable, type ControlPlaneClient } from '../control-plane-client.js';
import type { WireFormat } from '../call.js';
import type { HoldStore, MoneySnapshot } from './holds.js';
import { liveHold, moneySnapshot } from './snapshot.js';
import type { HoldKeepAlive } from './keep-alive.js';
import type { Outbox, OutboxRecord, OutboxSlot } from './outbox.js';
import { costMicros } from './cost.js';
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
  /** The wire format the client used, and when the proxy received the call (performance.now()). */
  format: WireFormat;
  startedMs: number;
}

const FIRST_RETRY_MS = 200;
/**
 * As many reports as one call to the control plane may carry: its cost per
 * statement (about 3 ms on the embedded store) is spread over more calls. On
 * PGlite, 27-30 µs per settled call in batches of 1,000 against 31-35 in
 * batches of 500 (the bench's ledger scenario).
 */
const MAX_BATCH = USAGE_BATCH_MAX;
const MAX_IN_FLIGHT = 2;
/**
 * How long the first record of a batch waits for company before it goes to
 * disk. It is also the most a settled call waits before its record is on
 * disk, so it stays short: a crash loses at most this window.
 */
const GATHER_MS = 15;
/** A batch this big goes to disk at once rather than waiting out GATHER_MS. */
const FLUSH_AT = 200;
/**
 * How long a record on disk waits for company before it is reported to the
 * control plane (or less, once MAX_BATCH wait). Each report costs the
 * control plane a request and a statement whatever its size (on the embedded
 * store about 3 ms), so a call a millisecond apart must not each make one:
 * at one connection a 15 ms window made batches of ~9 and cost the control
 * plane over 1 ms per call. The record is already durable; the wait only
 * delays money coming back to the balance (the hold is released when the
 * report is acknowledged), never lets more out.
 */
const REPORT_MS = 100;

interface Settlement {
  record: OutboxRecord;
  /** When it joined the unsent queue (performance.now()): the report window runs from its oldest record. */
  queuedAt?: number;
  /** Where the record sits on disk; undefined until written (or if the write failed). */
  slot?: OutboxSlot;
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
 * the control plane's new snapshot.
 */
export function createMetering(deps: MeteringDeps) {
  const { cp, holds, limits, logger, outbox, live } = deps;
  let gathering: Settlement[] = [];
  const unsent: Settlement[] = [];
  /** Batches to send as they are: the halves of a batch the control plane refused. */
  const exact: Settlement[][] = [];
  const pending = new Set<Promise<void>>();
  /** Settled and not yet acknowledged by the control plane. */
  let owed = 0;
  let sending = 0;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let reportTimer: NodeJS.Timeout | undefined;
  let immediate = false;
  let stopped = false;
  /** Report what is on disk without waiting out the window (drain and shutdown). */
  let hurry = false;

  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  /** Ends a recorded call's hold, adopting the control plane's answer; a promise only when the store is Redis. */
  function release(s: Settlement, r: UsageResult): Promise<void> | undefined {
    const { report, workspaceId } = s.record;
    const snapshot: MoneySnapshot | undefined = r.workspace_id === null ? undefined : moneySnapshot(r.workspace_id, report.key_id, r);
    // Off the live list first: a hold put back after Redis lost its data must not outlive its release.
    live.remove(report.request_id);
    const released = holds.release(report.request_id, { workspaceId, keyId: report.key_id }, snapshot);
    return released?.catch((err: unknown) => logger.warn({ err, requestId: report.request_id }, 'hold release failed; it will expire'));
  }

  async function send(batch: Settlement[]): Promise<void> {
    let results: UsageResult[];
    try {
      results = await cp.reportUsage(batch.map((s) => s.record.report));
    } catch (err) {
      if (!(err instanceof ControlPlaneUnavailable)) return refused(batch, err as Error);
      unsent.unshift(...batch);
      failures++;
      const delay = Math.min(FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 20), deps.retryMaxMs);
      logger.warn({ err: (err as Error).message, requests: batch.length, failures, retryInMs: delay }, 'usage report failed; retrying');
      if (!retryTimer && !stopped) {
        retryTimer = setTimeout(() => {
          retryTimer = undefined;
          pump();
        }, delay);
      }
      return;
    }
    failures = 0;
    owed -= batch.length;
    // A record-only report's hold went when the call failed; adopting the answer's snapshot is still welcome.
    const releasing: Promise<void>[] = [];
    for (let i = 0; i < batch.length; i++) {
      const released = release(batch[i]!, results[i]!);
      if (released) releasing.push(released);
    }
    if (releasing.length) await Promise.all(releasing);
    const acks = new Map<number, number>();
    for (const s of batch) if (s.slot) acks.set(s.slot.segment, (acks.get(s.slot.segment) ?? 0) + 1);
    for (const [segment, count] of acks) {
      await outbox.ack({ segment }, count).catch((err: unknown) => logger.warn({ err }, 'outbox cleanup failed'));
    }
  }

  /** The TPM window keeps the admission estimate instead of the real count; it rolls over within the minute. */
  function tokenWindowNotCorrected(call: HeldCall) {
    return (err: unknown) => logger.warn({ err: (err as Error).message, requestId: call.requestId }, 'token window correction failed');
  }

  /**
   * The control plane answered and refused the batch (a 4xx: a record it will
   * not take). One bad record must not hold back every other: the batch is
   * split until the refused record is alone, and that one stays in the outbox
   * with its hold, retried apart at the longest interval, and logged.
   */
  function refused(batch: Settlement[], err: Error): void {
    if (batch.length > 1) {
      const mid = Math.ceil(batch.length / 2);
      exact.push(batch.slice(0, mid), batch.slice(mid));
      return;
    }
    logger.error(
      { err: err.message, requestId: batch[0]!.record.report.request_id },
      'control plane refused a usage report; kept, and retried apart',
    );
    const later = setTimeout(() => {
      exact.push(batch);
      pump();
    }, deps.retryMaxMs);
    later.unref();
  }

  /** Queues written records for the control plane. */
  function queue(batch: Settlement[]): void {
    const now = performance.now();
    for (const s of batch) s.queuedAt ??= now;
    unsent.push(...batch);
    pump();
  }

  /** The next batch for the control plane, once its oldest record has waited out the window (or enough have gathered). */
  function nextBatch(): Settlement[] | undefined {
    const split = exact.shift();
    if (split) return split;
    if (!unsent.length) return undefined;
    const wait = unsent[0]!.queuedAt! + REPORT_MS - performance.now();
    if (hurry || wait <= 0 || unsent.length >= MAX_BATCH) return unsent.splice(0, MAX_BATCH);
    if (!reportTimer) {
      reportTimer = setTimeout(() => {
        reportTimer = undefined;
        pump();
      }, wait);
    }
    return undefined;
  }

  function pump(): void {
    while (sending < MAX_IN_FLIGHT && !retryTimer && !stopped) {
      const batch = nextBatch();
      if (!batch) return;
      sending++;
      track(
        send(batch).finally(() => {
          sending--;
          pump();
        }),
      );
    }
  }

  /** The gathered batch goes to disk (one durable write), then to the sender. */
  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    immediate = false;
    if (!gathering.length) return;
    const batch = gathering;
    gathering = [];
    track(
      outbox.append(batch.map((s) => s.record)).then(
        (slot) => {
          for (const s of batch) s.slot = slot;
          queue(batch);
        },
        (err: unknown) => {
          // Not durable, but still sent: better than holding back the bill.
          logger.error({ err, requests: batch.length }, 'settlement outbox write failed');
          queue(batch);
        },
      ),
    );
  }

  function wake(): void {
    failures = 0;
    if (!retryTimer) return;
    clearTimeout(retryTimer);
    retryTimer = undefined;
    pump();
  }

  function schedule(): void {
    if (gathering.length >= FLUSH_AT) {
      if (!immediate) {
        immediate = true;
        setImmediate(flush);
      }
      return;
    }
    if (!timer) timer = setTimeout(flush, GATHER_MS);
  }

  /** Adds one call's usage record to the batch being gathered; a record-only one (not billed) holds nothing. */
  function gather(call: HeldCall, input: number, output: number, cost: number, status: number, recordOnly: boolean): void {
    owed++;
    const record: OutboxRecord = {
      report: {
        request_id: call.requestId,
        key_id: call.keyId,
        model: call.model.alias,
        input_tokens: input,
        output_tokens: output,
        cost_micros: cost,
        // The request detail for the usage console.
        format: call.format,
        status,
        latency_ms: Math.max(0, Math.round(performance.now() - call.startedMs)),
      },
      workspaceId: call.workspaceId,
      keyBudget: call.keyBudget,
    };
    if (recordOnly) record.recordOnly = true;
    gathering.push({ record });
    schedule();
  }

  return {
    /** Replays what an earlier run left unacknowledged: its holds go back first, so they count before any admission. */
    async start(): Promise<void> {
      const replayed = outbox.replayed;
      if (!replayed.length) return;
      for (const { record } of replayed) {
        if (record.recordOnly) continue;
        live.add(liveHold(record.report.request_id, record.workspaceId, record.report.key_id, record.report.cost_micros, record.keyBudget));
      }
      await holds.reassert(live.list());
      owed += replayed.length;
      logger.info({ requests: replayed.length }, 'replaying unacknowledged usage from the outbox');
      // Replayed records have waited long enough already.
      queue(replayed.map(({ record, slot }) => ({ record, slot, queuedAt: -Infinity })));
    },
    /** A call was admitted with this hold: it is owed until released or acknowledged. */
    admitted(call: HeldCall): void {
      live.add(liveHold(call.requestId, call.workspaceId, call.keyId, call.holdMicros, call.keyBudget));
    },
    /** Bills reported (or, for a cut-short call, estimated) usage. Never zero: at least one input token. Returns the cost billed. */
    settle(call: HeldCall, inputTokens: number, outputTokens: number, status = 200): number {
      const input = Math.max(1, inputTokens);
      const output = Math.max(0, outputTokens);
      const full = costMicros(call.model, input, output);
      // The hold is the ceiling: the key was promised no more than this.
      const cost = Math.min(full, call.holdMicros);
      if (cost < full) logger.warn({ requestId: call.requestId }, 'usage exceeded its hold; billed at the hold');
      void limits.adjustTokens(call.keyId, call.tpm, input + output - call.tokensTaken)?.catch(tokenWindowNotCorrected(call));
      gather(call, input, output, cost, status, false);
      return cost;
    },
    /**
     * Not billed: the upstream failed before answering (`status` is what the
     * client got), answered with its own error, or the proxy failed. The hold
     * goes now; the call is still recorded, at no cost, so the usage console
     * counts it.
     */
    release(call: HeldCall, status: number): void {
      live.remove(call.requestId);
      gather(call, 0, 0, 0, status, true);
      track(
        (async () => {
          await limits.adjustTokens(call.keyId, call.tpm, -call.tokensTaken)?.catch(tokenWindowNotCorrected(call));
          await holds.release(call.requestId, { workspaceId: call.workspaceId, keyId: call.keyId });
        })().catch((err: unknown) => logger.error({ err, requestId: call.requestId }, 'hold release failed; it will expire')),
      );
    },
    /** Too many settlements wait for the control plane: new calls are refused rather than served unbilled. */
    full: (): boolean => owed >= deps.maxPending,
    /** The control plane is reachable again: retry now, and start the backoff over. */
    wake,
    /** Waits until every settlement so far is recorded and released (tests). */
    async drain(): Promise<void> {
      hurry = true;
      try {
        while (gathering.length || unsent.length || exact.length || pending.size || timer || immediate) {
          if (gathering.length && !timer && !immediate) flush();
          if (unsent.length) pump();
          if (pending.size) await Promise.allSettled([...pending]);
          // A referenced timer: a process with nothing else on its loop (no server) must not end mid-drain.
          else await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        hurry = false;
      }
    },
    /**
     * Shutdown: writes what has gathered, tries for up to `ms` to have the
     * control plane take everything, then stops; what is left stays in the
     * outbox for the next start.
     */
    async close(ms: number): Promise<void> {
      hurry = true;
      flush();
      pump();
      const deadline = Date.now() + ms;
      // A report that failed is tried again every half second until the deadline, not on the backoff.
      for (let tick = 0; (unsent.length || exact.length || pending.size) && Date.now() < deadline; tick++) {
        if (tick % 25 === 0) wake();
        await new Promise((r) => setTimeout(r, 20).unref());
      }
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (reportTimer) clearTimeout(reportTimer);
      retryTimer = undefined;
      reportTimer = undefined;
      await outbox.close();
      if (unsent.length || sending) logger.warn({ requests: owed }, 'usage left in the outbox for the next start');
    },
  };
}
export type Metering = ReturnType<typeof createMetering>;
