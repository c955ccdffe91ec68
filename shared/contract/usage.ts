import { z } from 'zod';
import { keyBudgetFields, keyMoneySchema } from './money.js';
import { USAGE_FORMATS } from '../wire-formats.js';

/** Most reports one `POST /internal/usage` may carry. */
export const USAGE_BATCH_MAX = 1000;

/** A femtodollar (1e-15 USD) amount as a string of digits: exact, and past 2^53 after nine dollars. */
const femtos = z.string().regex(/^\d{1,30}$/, 'a whole number of femtodollars as a string of digits');
const signedFemtos = z.string().regex(/^-?\d{1,30}$/, 'a whole number of femtodollars as a string of digits');
const tokens = z.number().int().nonnegative().max(2_147_483_647);

/**
 * Why Tollgate itself refused a call (docs/console-api.md, refusals): the key
 * (revoked, expired, another workspace's), the body, the model (unknown or
 * not allowed), a rate limit, the key's budget or the workspace balance.
 */
export const REFUSAL_REASONS = ['budget', 'balance', 'rate_limit', 'model_access', 'key', 'bad_request'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/**
 * One settled call, reported by the proxy. `cost_micros` is the cost in
 * integer micro-dollars (rounded up), what the proxy's holds count in;
 * `cost_femtos`, when given, is the exact cost and the one billed.
 * `input_tokens` are the uncached prompt tokens: cache reads and writes are
 * counted apart, never twice.
 */
export const usageReportSchema = z
  .strictObject({
    request_id: z.string().min(1).max(200),
    key_id: z.uuid(),
    /** The alias billed; for a refusal the model the call asked for, empty when it was refused before its body was read. */
    model: z.string().max(200),
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cost_micros: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    // Optional request detail for the usage console; a proxy that does not send it is still accepted.
    format: z.enum(USAGE_FORMATS).optional(),
    /** The HTTP status the client got; 400 and above count as errors. */
    status: z.number().int().min(100).max(599).optional(),
    /** From the proxy receiving the call to the answer's end. */
    latency_ms: z.number().int().nonnegative().max(2_147_483_647).optional(),
    /** When the proxy received the call, ms since the epoch (a refusal group: its first call); the request log shows it. */
    started_at_ms: z.number().int().min(0).max(8_640_000_000_000_000).optional(),
    /** When the call's hold was taken (epoch ms, the proxy's clock): a key's period spend counts it in that period (docs/keys.md). */
    held_at_ms: z.number().int().nonnegative().max(8_640_000_000_000_000).optional(),
    /** The deployment that served the call, `provider/upstream_model` (`model` is the alias billed, a fallback's when one answered). */
    deployment: z.string().min(1).max(400).optional(),
    /** Prompt tokens read from the provider's cache. */
    cache_read_tokens: tokens.optional(),
    /** Prompt tokens written to the cache, 5-minute and 1-hour writes together. */
    cache_write_tokens: tokens.optional(),
    /** The part of `cache_write_tokens` written to a 1-hour cache. */
    cache_write_1h_tokens: tokens.optional(),
    /** Server-side web searches the provider ran and bills. */
    web_search_requests: tokens.optional(),
    /** The exact cost, femtodollars; billed instead of `cost_micros` when given. */
    cost_femtos: femtos.optional(),
    /** What caching saved against every prompt token at the input price, femtodollars; negative when writes outweighed reads. */
    cache_saved_femtos: signedFemtos.optional(),
    /**
     * A refusal, not a call: `refused_count` calls of this key, model, reason,
     * format and status were refused in one short window, the first of them
     * `request_id`. Nothing is billed (`cost_micros` 0, no tokens).
     */
    refusal_reason: z.enum(REFUSAL_REASONS).optional(),
    refused_count: z.number().int().min(1).max(1_000_000_000).optional(),
  })
  .refine((r) => r.model.length > 0 || r.refusal_reason !== undefined, { message: 'model: required', path: ['model'] })
  .refine((r) => (r.refusal_reason === undefined) === (r.refused_count === undefined), {
    message: 'refused_count: given with refusal_reason, and only then',
    path: ['refused_count'],
  })
  .refine((r) => r.refusal_reason === undefined || (r.cost_micros === 0 && r.cost_femtos === undefined), {
    message: 'cost_micros: a refusal costs nothing',
    path: ['cost_micros'],
  })
  .refine((r) => (r.cache_write_1h_tokens ?? 0) <= (r.cache_write_tokens ?? 0), {
    message: 'cache_write_1h_tokens: part of cache_write_tokens, so never more',
    path: ['cache_write_1h_tokens'],
  });
export type UsageReport = z.infer<typeof usageReportSchema>;

/** `POST /internal/usage` body. */
export const usageBatchSchema = z.strictObject({ reports: z.array(usageReportSchema).min(1).max(USAGE_BATCH_MAX) });

/** The control plane's answer per report: the key's money after the batch, with row versions. */
export const usageResultSchema = z.object({
  request_id: z.string(),
  /** False for a repeat of a request id already in the ledger, or for an unknown key. */
  recorded: z.boolean(),
  workspace_id: z.string().nullable(),
  balance_micros: z.number().int(),
  balance_version: z.number().int(),
  key_remaining_micros: z.number().int().nullable(),
  key_version: z.number().int(),
  ...keyBudgetFields,
});
export type UsageResult = z.infer<typeof usageResultSchema>;

/** `POST /internal/usage` answer: one result per report, in order. */
export const usageAnswerSchema = z.object({ results: z.array(usageResultSchema) });

/**
 * The query value (`POST /internal/usage?answer=keys`) by which a proxy asks
 * for the answer per key instead of per report: the money is the same for
 * every report of one key (it is the key's after the whole batch), and the
 * proxy does not use `recorded`, so a batch of 1,000 reports on a few keys is
 * answered in a few hundred bytes rather than 190 KB parsed and checked
 * report by report. A control plane from before it ignores the query and
 * answers per report (`usageAnswerSchema`), which the proxy still reads: in a
 * rolling upgrade either side may be the older.
 */
export const USAGE_ANSWER_PER_KEY = 'keys';

/** One key's money after the batch (workspace balance and key budget, with row versions). */
export const usageKeyMoneySchema = keyMoneySchema.extend({ key_id: z.string() });
export type UsageKeyMoney = z.infer<typeof usageKeyMoneySchema>;

/** `POST /internal/usage?answer=keys` answer: each key the batch billed and the control plane knows, once. A key it does not know is absent. */
export const usageKeysAnswerSchema = z.object({ keys: z.array(usageKeyMoneySchema) });
