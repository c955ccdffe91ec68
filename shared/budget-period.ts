/**
 * Budget periods: UTC calendar days, ISO weeks (Monday 00:00 UTC to the next
 * Monday) and calendar months. Both halves use these: the control plane to
 * show a key's period and settle spend into it, the proxy to notice a
 * boundary its cached answer predates (docs/keys.md).
 */
export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

const DAY_MS = 86_400_000;

/** The start (epoch ms, UTC) of the period holding `atMs`. */
export function periodStartMs(period: BudgetPeriod, atMs: number): number {
  const d = new Date(atMs);
  const dayStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'day') return dayStart;
  if (period === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  // getUTCDay: Sunday 0 … Saturday 6; ISO weeks start on Monday.
  return dayStart - ((d.getUTCDay() + 6) % 7) * DAY_MS;
}

/** The end (exclusive, epoch ms) of the period holding `atMs`: when its spend resets. */
export function periodEndMs(period: BudgetPeriod, atMs: number): number {
  const start = periodStartMs(period, atMs);
  if (period === 'day') return start + DAY_MS;
  if (period === 'week') return start + 7 * DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Whole UTC days since the epoch: the coarse part of a budget snapshot's version (proxy/money/snapshot.ts). */
export function epochDay(atMs: number): number {
  return Math.floor(atMs / DAY_MS);
}
