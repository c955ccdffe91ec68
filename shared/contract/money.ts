import { z } from 'zod';
import { BUDGET_PERIODS } from '../budget-period.js';

/**
 * A key's budget over time, beside `key_remaining_micros` (what is left of
 * it in the period `period_start_ms` starts, or of the lifetime budget when
 * there is no period): enough for a proxy to see a period boundary its
 * snapshot predates. Absent on an older control plane's answers: a lifetime
 * budget then. `budget_day` (UTC days since the epoch of the budget's last
 * change) orders snapshots across a change of period (proxy/money/snapshot.ts).
 */
export const keyBudgetFields = {
  budget_micros: z.number().int().nullable().optional(),
  budget_period: z.enum(BUDGET_PERIODS).nullable().optional(),
  period_start_ms: z.number().int().nullable().optional(),
  budget_day: z.number().int().nonnegative().optional(),
};

/** `GET /internal/money/:keyId` takes the key's id. */
export const keyIdSchema = z.uuid();

/**
 * A key's money as committed in the ledger now, with the row versions it was
 * read at: what a proxy founds a hold account on after Redis lost it (a
 * proxy's cached snapshot may predate spend whose holds went with Redis).
 */
export const keyMoneySchema = z.object({
  workspace_id: z.string(),
  balance_micros: z.number().int(),
  balance_version: z.number().int(),
  key_remaining_micros: z.number().int().nullable(),
  key_version: z.number().int(),
  ...keyBudgetFields,
});
export type KeyMoney = z.infer<typeof keyMoneySchema>;

/** `GET /internal/money/:keyId` answer: null when no key has that id. */
export const keyMoneyAnswerSchema = z.object({ money: keyMoneySchema.nullable() });
