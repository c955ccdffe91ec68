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
}

const RETRY_DELAYS_MS = [200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/**
 * Settles a held call: bill once, then release. The usage report is
 * idempotent on the request id, so it is retried until the control plane
 * takes it; the hold stays in place meanwhile (it still counts against the
 * money) and is released with the control plane's new snapshot.
 */
export function createMetering(cp: ControlPlaneClient, holds: HoldStore, limits: RateLimits, logger: Logger) {
  const pending = new Set<Promise<void>>();

  async function report(call: HeldCall, inputTokens: number, outputTokens: number): Promise<void> {
    // The hold is the ceiling: the key was promised no more than this.
    const cost = Math.min(costMicros(call.model, inputTokens, outputTokens), call.holdMicros);
    if (cost < costMicros(call.model, inputTokens, outputTokens)) {
      logger.warn({ requestId: call.requestId }, 'usage exceeded its hold; billed at the hold');
    }
    await limits.adjustTokens(call.keyId, call.tpm, inputTokens + outputTokens - call.tokensTaken).catch(() => undefined);
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await cp.reportUsage({
          request_id: call.requestId,
          key_id: call.keyId,
          model: call.model.alias,
          input_tokens: inputTokens,
          output_tokens: outputTokens,
          cost_micros: cost,
        });
        const snapshot: MoneySnapshot = {
          workspaceId: r.workspace_id,
          balanceMicros: r.balance_micros,
          balanceVersion: r.balance_version,
          keyId: call.keyId,
          keyRemainingMicros: r.key_remaining_micros,
          keyVersion: r.key_version,
        };
        await holds.release(call.requestId, { workspaceId: call.workspaceId, keyId: call.keyId }, snapshot);
        return;
      } catch (err) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          logger.error({ err, requestId: call.requestId }, 'usage report failed for good; the hold will expire');
          return;
        }
        logger.warn({ err: (err as Error).message, requestId: call.requestId, attempt }, 'usage report failed; retrying');
        await new Promise((r) => setTimeout(r, delay).unref());
      }
    }
  }

  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  return {
    /** Bills reported (or, for a cut-short call, estimated) usage. Never zero: at least the input estimate. */
    settle(call: HeldCall, inputTokens: number, outputTokens: number): void {
      track(report(call, Math.max(1, inputTokens), Math.max(0, outputTokens)));
    },
    /** Not billed: the upstream failed before answering, or answered with its own error. */
    release(call: HeldCall): void {
      track(
        (async () => {
          await limits.adjustTokens(call.keyId, call.tpm, -call.tokensTaken).catch(() => undefined);
          await holds.release(call.requestId, { workspaceId: call.workspaceId, keyId: call.keyId });
        })().catch((err: unknown) => logger.error({ err, requestId: call.requestId }, 'hold release failed; it will expire')),
      );
    },
    /** Waits for reports in flight (tests, shutdown). */
    async drain(): Promise<void> {
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
}

export type Metering = ReturnType<typeof createMetering>;
