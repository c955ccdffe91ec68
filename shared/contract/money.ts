import { z } from 'zod';

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
});
export type KeyMoney = z.infer<typeof keyMoneySchema>;

/** `GET /internal/money/:keyId` answer: null when no key has that id. */
export const keyMoneyAnswerSchema = z.object({ money: keyMoneySchema.nullable() });
