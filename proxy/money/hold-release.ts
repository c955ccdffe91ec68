import type { UsageResult } from '../../shared/contract/usage.js';
import type { Logger } from '../../shared/logger.js';
import type { HoldStore } from './holds.js';
import type { HoldKeepAlive } from './keep-alive.js';
import type { Settlement } from './settlement.js';
import { moneySnapshot } from './snapshot.js';

/**
 * Ends a recorded call's hold, adopting the control plane's answer (its
 * money snapshot after the usage) so the store never sees more money than
 * exists; a promise only when the store is Redis.
 */
export function releaseRecorded(holds: HoldStore, live: HoldKeepAlive, logger: Logger, s: Settlement, r: UsageResult): Promise<void> | undefined {
  const { report, workspaceId } = s.record;
  const snapshot = r.workspace_id === null ? undefined : moneySnapshot(r.workspace_id, report.key_id, r);
  // Off the live list first: a hold put back after Redis lost its data must not outlive its release.
  live.remove(report.request_id);
  const released = holds.release(report.request_id, { workspaceId, keyId: report.key_id }, snapshot);
  return released?.catch((err: unknown) => logger.warn({ err, requestId: report.request_id }, 'hold release failed; it will expire'));
}
