/**
 * The one place the wire's snake_case money (a resolved key, the control
 * plane's answer to a usage report, its `GET /internal/money` answer) turns
 * into the proxy's own camelCase money snapshot, and where a live hold is
 * built from what it is owed for.
 */
import type { LiveHold, MoneySnapshot } from './holds.js';

/** The money fields every wire shape shares: a key's and its workspace's remaining micro-dollars, with row versions. */
export interface WireMoney {
  balance_micros: number;
  balance_version: number;
  key_remaining_micros: number | null;
  key_version: number;
}

/**
 * What is left of a key's budget now, in micro-dollars (null: no budget):
 * the one place admission asks, so a budget that renews by period decides it here.
 */
export function budgetLeft(m: WireMoney): number | null {
  return m.key_remaining_micros;
}

export function moneySnapshot(workspaceId: string, keyId: string, m: WireMoney): MoneySnapshot {
  return {
    workspaceId,
    balanceMicros: m.balance_micros,
    balanceVersion: m.balance_version,
    keyId,
    keyRemainingMicros: budgetLeft(m),
    keyVersion: m.key_version,
  };
}

/** A hold owed on `workspaceId` (and on the key too when it has a budget). */
export function liveHold(requestId: string, workspaceId: string, keyId: string, amountMicros: number, keyBudget: boolean): LiveHold {
  return { requestId, workspaceId, keyId, amountMicros, keyBudget };
}
