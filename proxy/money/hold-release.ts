import type { Logger } from '../../shared/logger.js';
import type { HoldStore, MoneySnapshot } from './holds.js';
import type { HoldKeepAlive } from './keep-alive.js';
import type { Settlement } from './settlement.js';

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
