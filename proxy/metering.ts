import type { UsageReport, UsageResult } from '../shared/contract/usage.js';
import type { Logger } from '../shared/logger.js';
import type { ModelConfig } from '../shared/models.js';
import type { ControlPlaneClient } from './control-plane-client.js';
import type { HoldStore, MoneySnapshot } from './holds.js';
import { costMicros } from './money.js';
import type { RateLimits } from './rate-limits.js';

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
  /** The wire format the client used, and when the proxy received the call (performance.now()). */
  format: 'chat' | 'messages';
  startedMs: number;
}

const RETRY_DELAYS_MS = [200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000];
const MAX_BATCH = 500;
const MAX_IN_FLIGHT = 2;
/**
 * How long the first report of a batch waits for company. Each batch costs
 * the control plane a request and a transaction whatever its size, so at
 * thousands of calls a second a few milliseconds turn batches of a handful
 * into batches of dozens; a hold is released that much later, which only
 * delays money coming back, never lets more out.
 */
const GATHER_MS = 15;
/** A batch this big goes at once rather than waiting out GATHER_MS. */
const FLUSH_AT = 200;

interface Settlement {
  call: HeldCall;
  report: UsageReport;
  /** A call that failed upstream: recorded for the usage console at no cost, its hold already released. */
  recordOnly?: boolean;
}

/** The report's request detail for the usage console. */
function detailOf(call: HeldCall, status: number): Pick<UsageReport, 'format' | 'status' | 'latency_ms'> {
  return { format: call.format, status, latency_ms: Math.max(0, Math.round(performance.now() - call.startedMs)) };
}

/**
 * Settles held calls: bill once, then release. Reports go to the control
 * plane in batches, group-commit style: while a batch is in flight the next
 * one gathers, so the ledger takes one transaction per batch, not per call.
 * A report is idempotent on its request id, so a failed batch is retried
 * whole; its holds stay in place meanwhile (they still count against the
 * money) and are released with the control plane's new snapshot.
 */
export function createMetering(cp: ControlPlaneClient, holds: HoldStore, limits: RateLimits, logger: Logger) {
  const queue: Settlement[] = [];
  const pending = new Set<Promise<void>>();
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let immediate = false;

  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  async function release(s: Settlement, r: UsageResult): Promise<void> {
    const snapshot: MoneySnapshot | undefined =
      r.workspace_id === null
        ? undefined
        : {
            workspaceId: r.workspace_id,
            balanceMicros: r.balance_micros,
            balanceVersion: r.balance_version,
            keyId: s.call.keyId,
            keyRemainingMicros: r.key_remaining_micros,
            keyVersion: r.key_version,
          };
    await holds.release(s.call.requestId, { workspaceId: s.call.workspaceId, keyId: s.call.keyId }, snapshot);
  }

  async function send(batch: Settlement[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const results = await cp.reportUsage(batch.map((s) => s.report));
        await Promise.all(batch.flatMap((s, i) => (s.recordOnly ? [] : [release(s, results[i]!)])));
        return;
      } catch (err) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          logger.error({ err, requests: batch.length }, 'usage report failed for good; its holds will expire');
          return;
        }
        logger.warn({ err: (err as Error).message, requests: batch.length, attempt }, 'usage report failed; retrying');
        await new Promise((r) => setTimeout(r, delay).unref());
      }
    }
  }

  /** The TPM window keeps the admission estimate instead of the real count; it rolls over within the minute. */
  function tokenWindowNotCorrected(call: HeldCall) {
    return (err: unknown) => logger.warn({ err: (err as Error).message, requestId: call.requestId }, 'token window correction failed');
  }

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    immediate = false;
    while (queue.length && inFlight < MAX_IN_FLIGHT) {
      const batch = queue.splice(0, MAX_BATCH);
      inFlight++;
      track(
        send(batch).finally(() => {
          inFlight--;
          if (queue.length) schedule();
        }),
      );
    }
  }

  function schedule(): void {
    if (queue.length >= FLUSH_AT && inFlight < MAX_IN_FLIGHT) {
      if (!immediate) {
        immediate = true;
        setImmediate(flush);
      }
      return;
    }
    if (!timer) timer = setTimeout(flush, GATHER_MS);
  }

  return {
    /** Bills reported (or, for a cut-short call, estimated) usage. Never zero: at least one input token. Returns the cost billed. */
    settle(call: HeldCall, inputTokens: number, outputTokens: number, status = 200): number {
      const input = Math.max(1, inputTokens);
      const output = Math.max(0, outputTokens);
      const full = costMicros(call.model, input, output);
      // The hold is the ceiling: the key was promised no more than this.
      const cost = Math.min(full, call.holdMicros);
      if (cost < full) logger.warn({ requestId: call.requestId }, 'usage exceeded its hold; billed at the hold');
      void limits.adjustTokens(call.keyId, call.tpm, input + output - call.tokensTaken).catch(tokenWindowNotCorrected(call));
      queue.push({
        call,
        report: {
          request_id: call.requestId,
          key_id: call.keyId,
          model: call.model.alias,
          input_tokens: input,
          output_tokens: output,
          cost_micros: cost,
          ...detailOf(call, status),
        },
      });
      schedule();
      return cost;
    },
    /**
     * Not billed: the upstream failed before answering (`status` is what the
     * client got), or answered with its own error. The hold goes now; the
     * call is still recorded, at no cost, so the usage console counts it.
     */
    release(call: HeldCall, status: number): void {
      queue.push({
        call,
        recordOnly: true,
        report: {
          request_id: call.requestId,
          key_id: call.keyId,
          model: call.model.alias,
          input_tokens: 0,
          output_tokens: 0,
          cost_micros: 0,
          ...detailOf(call, status),
        },
      });
      schedule();
      track(
        (async () => {
          await limits.adjustTokens(call.keyId, call.tpm, -call.tokensTaken).catch(tokenWindowNotCorrected(call));
          await holds.release(call.requestId, { workspaceId: call.workspaceId, keyId: call.keyId });
        })().catch((err: unknown) => logger.error({ err, requestId: call.requestId }, 'hold release failed; it will expire')),
      );
    },
    /** Waits until every settlement so far is recorded and released (tests, shutdown). */
    async drain(): Promise<void> {
      while (queue.length || pending.size || timer || immediate) {
        if (pending.size) await Promise.allSettled([...pending]);
        else await new Promise((r) => setImmediate(r));
      }
    },
  };
}

export type Metering = ReturnType<typeof createMetering>;
