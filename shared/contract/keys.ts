import { z } from 'zod';
import { keyBudgetFields } from './money.js';

/** The proxy looks keys up by the SHA-256 of the secret: the secret itself never leaves the proxy. */
export const keyHashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');

/**
 * A key as the proxy sees it. Money is integer micro-dollars with the row
 * version it was read at, so a proxy can tell a newer snapshot from an older.
 */
export const resolvedKeySchema = z.object({
  id: z.string(),
  org_id: z.string(),
  workspace_id: z.string(),
  workspace_slug: z.string(),
  team_id: z.string(),
  owner_user_id: z.string().nullable(),
  revoked: z.boolean(),
  expires_at: z.string().nullable(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  models: z.array(z.string()),
  key_remaining_micros: z.number().int().nullable(),
  key_version: z.number().int(),
  ...keyBudgetFields,
  balance_micros: z.number().int(),
  balance_version: z.number().int(),
});
export type ResolvedKey = z.infer<typeof resolvedKeySchema>;

/** `GET /internal/keys/:hash`: the key (null when no key has that hash) and the change-feed position the answer is at least as new as. */
export const keyResolutionSchema = z.object({
  key: resolvedKeySchema.nullable(),
  version: z.number().int().nonnegative(),
});
export type KeyResolution = z.infer<typeof keyResolutionSchema>;
