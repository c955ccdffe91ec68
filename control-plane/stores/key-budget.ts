/**
 * A key's budget as the proxy is told it (shared/contract/money.ts
 * `keyBudgetFields`), as SQL select items over an `api_keys` row: one text
 * for every statement that answers a proxy (resolution, settlement, the
 * money of a key), so they cannot disagree on what is left.
 *
 * `k` names the row (or a row of the same columns), `now` the SQL
 * expression of the control plane's clock. A period budget counts the
 * period's spend only while `period_started_at` is the period `now` is in;
 * a later period has spent nothing yet.
 */
interface KeyBudgetSql {
  /** The lifetime spend, and the spend of the period starting at `period_started_at`. */
  spend: string;
  periodSpend: string;
  periodStartedAt: string;
}

/** The start of the budget period `now` is in, for a key row `k` with a `budget_period` (UTC calendar periods). */
export function periodStartSql(k: string, now: string): string {
  return `date_trunc(${k}.budget_period, ${now}::timestamptz, 'UTC')`;
}

/** The spend a key's budget counts at `now`: lifetime, or its present period's (nothing yet when the row's period is an earlier one). */
export function countedSpendSql(k: string, now: string, cols: KeyBudgetSql = defaultCols(k)): string {
  return `CASE WHEN ${k}.budget_period IS NULL THEN ${cols.spend}
               WHEN ${cols.periodStartedAt} = ${periodStartSql(k, now)} THEN ${cols.periodSpend}
               ELSE 0 END`;
}

export function keyBudgetSelect(k: string, now: string, cols: KeyBudgetSql = defaultCols(k)): string {
  const current = periodStartSql(k, now);
  return `CASE WHEN ${k}.budget_usd IS NULL THEN NULL
                 WHEN ${k}.budget_period IS NULL THEN floor((${k}.budget_usd - ${cols.spend}) * 1000000)
                 WHEN ${cols.periodStartedAt} = ${current} THEN floor((${k}.budget_usd - ${cols.periodSpend}) * 1000000)
                 ELSE floor(${k}.budget_usd * 1000000) END::float8 AS key_remaining_micros,
            floor(${k}.budget_usd * 1000000)::float8 AS budget_micros,
            ${k}.budget_period,
            CASE WHEN ${k}.budget_period IS NULL THEN NULL ELSE extract(epoch FROM ${current}) * 1000 END::float8 AS period_start_ms,
            floor(extract(epoch FROM ${k}.budget_changed_at) / 86400)::float8 AS budget_day`;
}

function defaultCols(k: string): KeyBudgetSql {
  return { spend: `${k}.spend_usd`, periodSpend: `${k}.period_spend_usd`, periodStartedAt: `${k}.period_started_at` };
}

/** The columns `keyBudgetSelect` adds, as a row carries them. */
export interface KeyBudgetRow {
  key_remaining_micros: number | null;
  budget_micros: number | null;
  budget_period: 'day' | 'week' | 'month' | null;
  period_start_ms: number | null;
  budget_day: number;
}
