import { z } from 'zod';

/** Most reports one `POST /internal/usage` may carry. */
export const USAGE_BATCH_MAX = 1000;

/** One settled call, reported by the proxy. Money is integer micro-dollars. */
export const usageReportSchema = z.strictObject({
  request_id: z.string().min(1).max(200),
  key_id: z.uuid(),
  model: z.string().min(1).max(200),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cost_micros: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  // Optional request detail for the usage console; a proxy that does not send it is still accepted.
  format: z.enum(['chat', 'messages', 'responses']).optional(),
  /** The HTTP status the client got; 400 and above count as errors. */
  status: z.number().int().min(100).max(599).optional(),
  /** From the proxy receiving the call to the answer's end. */
  latency_ms: z.number().int().nonnegative().max(2_147_483_647).optional(),
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
});
export type UsageResult = z.infer<typeof usageResultSchema>;

/** `POST /internal/usage` answer: one result per report, in order. */
export const usageAnswerSchema = z.object({ results: z.array(usageResultSchema) });
