import type { UsageKeyMoney } from '../../shared/contract/usage.js';
import type { Logger } from '../../shared/logger.js';
import type { HoldStore, MoneySnapshot } from './holds.js';
import type { HoldKeepAlive } from './keep-alive.js';
import type { Settlement } from './settlement.js';
import { moneySnapshot } from './snapshot.js';

/**
 * Ends a recorded call's hold, adopting the control plane's answer (its key's
 * money snapshot after the batch; none for a key it does not know) so the
 * store never sees more money than exists; a promise only when the store is Redis.
 */
export function releaseRecorded(
  holds: HoldStore,
  live: HoldKeepAlive,
  logger: Logger,
  s: Settlement,
  snapshot: MoneySnapshot | undefined,
): Promise<void> | undefined {
  // Off the live list first: a hold put back after Redis lost its data must not outlive its release.
  live.remove(s.requestId);
  const released = holds.release(s.requestId, { workspaceId: s.workspaceId, keyId: s.keyId }, snapshot);
  return released?.catch((err: unknown) => logger.warn({ err, requestId: s.requestId }, 'hold release failed; it will expire'));
}

/**
 * Ends every hold of a recorded batch, each adopting its key's money after
 * the batch: one snapshot per key, not one per call. A record-only report's
 * hold went when the call failed; adopting the snapshot is still welcome.
 */
export async function releaseBatch(
  holds: HoldStore,
  live: HoldKeepAlive,
  logger: Logger,
  batch: readonly Settlement[],
  money: readonly UsageKeyMoney[],
  nowMs: number = Date.now(),
): Promise<void> {
  const snapshots = new Map<string, MoneySnapshot>();
  for (const m of money) snapshots.set(m.key_id, moneySnapshot(m.workspace_id, m.key_id, m, nowMs));
  const releasing: Promise<void>[] = [];
  for (const s of batch) {
    const released = releaseRecorded(holds, live, logger, s, snapshots.get(s.keyId));
    if (released) releasing.push(released);
  }
  if (releasing.length) await Promise.all(releasing);
}
