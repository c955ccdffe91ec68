/**
 * The one place the wire's snake_case money (a resolved key, the control
 * plane's answer to a usage report, its `GET /internal/money` answer) turns
 * into the proxy's own camelCase money snapshot, and where a live hold is
 * built from what it is owed for.
 */
import { epochDay, periodStartMs, type BudgetPeriod } from '../../shared/budget-period.js';
import type { LiveHold, MoneySnapshot } from './holds.js';

/** The money fields every wire shape shares: a key's and its workspace's remaining micro-dollars, with row versions. */
export interface WireMoney extends WireKeyBudget {
  balance_micros: number;
  balance_version: number;
}

/** A key's budget as the control plane answered it (shared/contract/money.ts `keyBudgetFields`). */
export interface WireKeyBudget {
  key_remaining_micros: number | null;
  key_version: number;
  budget_micros?: number | null | undefined;
  budget_period?: BudgetPeriod | null | undefined;
  period_start_ms?: number | null | undefined;
  budget_day?: number | undefined;
}

/** Versions below 2^32 per day of the coarse part: a key's row version stays far below it, the product below 2^53. */
const VERSION_SPAN = 2 ** 32;

/**
 * What is left of a key's budget now (null: no budget), with the version
 * that orders it against every other proxy's figure in the hold store.
 *
 * A lifetime budget is what the control plane answered. A period budget is
 * what it answered for the period it answered about; once `nowMs` is in a
 * later period the answer predates, the period's spend is none the control
 * plane has counted, so the whole budget is left (holds already taken still
 * count against it in the hold store until they settle; their cost settles
 * into the period they were taken in). The version's coarse part is the
 * day the period starts (or, when later, the day the budget last changed;
 * a lifetime budget uses the latter alone), so a new period's figure
 * replaces the last period's, whatever row versions either carries, and a
 * change between lifetime and period budgets orders by its row version.
 */
export function keyBudgetLeft(k: WireKeyBudget, nowMs: number): { remainingMicros: number | null; version: number } {
  const changedDay = k.budget_day ?? 0;
  if (k.key_remaining_micros === null || !k.budget_period || k.period_start_ms == null || k.budget_micros == null) {
    return { remainingMicros: k.key_remaining_micros, version: changedDay * VERSION_SPAN + k.key_version };
  }
  const current = periodStartMs(k.budget_period, nowMs);
  const later = current > k.period_start_ms;
  const day = Math.max(epochDay(later ? current : k.period_start_ms), changedDay);
  return { remainingMicros: later ? k.budget_micros : k.key_remaining_micros, version: day * VERSION_SPAN + k.key_version };
}

export function moneySnapshot(workspaceId: string, keyId: string, m: WireMoney, nowMs: number): MoneySnapshot {
  const key = keyBudgetLeft(m, nowMs);
  return {
    workspaceId,
    balanceMicros: m.balance_micros,
    balanceVersion: m.balance_version,
    keyId,
    keyRemainingMicros: key.remainingMicros,
    keyVersion: key.version,
  };
}

/** A hold owed on `workspaceId` (and on the key too when it has a budget). */
export function liveHold(requestId: string, workspaceId: string, keyId: string, amountMicros: number, keyBudget: boolean): LiveHold {
  return { requestId, workspaceId, keyId, amountMicros, keyBudget };
}
