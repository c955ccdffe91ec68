import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { parseValid } from '../http/body.js';
import { usageRequests, usageSummary } from '../services/workspaces/usage.js';
import { REFUSAL_REASONS } from '../../shared/contract/usage.js';
import { csvMoney, sendCsv } from './csv.js';

/** One CSV export of the request log holds at most this many rows (the newest). */
const MAX_CSV_REQUESTS = 100_000;

const when = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

const filters = {
  from: when.optional(),
  to: when.optional(),
  key_id: z.uuid().optional(),
  team_id: z.uuid().optional(),
  user_id: z.uuid().optional(),
  model: z.string().min(1).max(200).optional(),
  format: z.enum(['json', 'csv']).default('json'),
  /** Only the calls Tollgate refused (`true`) or served (`false`). */
  refused: z.enum(['true', 'false']).optional(),
  reason: z.enum(REFUSAL_REASONS).optional(),
};

export const summaryQuery = z
  .object({
    ...filters,
    granularity: z.enum(['day', 'hour']).default('day'),
    group_by: z.enum(['model', 'key', 'team', 'user', 'deployment', 'reason']).default('model'),
  })
  .strict();

export const requestsQuery = z
  .object({
    ...filters,
    errors: z.enum(['true', 'false']).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().min(1).max(100).optional(),
  })
  .strict();

function flag(v: 'true' | 'false' | undefined): boolean | undefined {
  return v === undefined ? undefined : v === 'true';
}

function day(iso: string): string {
  return iso.slice(0, 10);
}

/** Usage of a workspace: GET /v1/workspaces/:workspace_id/usage and /usage/requests (JSON, or CSV with format=csv). */
export function usageRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.get('/v1/workspaces/:workspace_id/usage', session, async function showUsage(ctx: Context) {
    const q = parseValid(summaryQuery, ctx.query);
    const summary = await usageSummary(deps, authOf(ctx), ctx.params.workspace_id, { ...q, refused: flag(q.refused) });
    if (q.format === 'json') {
      ctx.body = summary;
      return;
    }
    const labels = new Map(summary.groups.map((g) => [g.id, g.label]));
    sendCsv(
      ctx,
      `usage-by-${summary.granularity}-and-${summary.group_by}-${day(summary.from)}-to-${day(summary.to)}.csv`,
      [
        'bucket',
        summary.group_by,
        `${summary.group_by}_id`,
        'spend_usd',
        'requests',
        'input_tokens',
        'output_tokens',
        'cache_read_tokens',
        'cache_write_tokens',
        'cache_saved_usd',
        'errors',
        'refused',
      ],
      summary.buckets.map((b) => [
        b.bucket,
        labels.get(b.group_id) ?? '',
        b.group_id,
        csvMoney(b.spend_usd),
        b.requests,
        b.input_tokens,
        b.output_tokens,
        b.cache_read_tokens,
        b.cache_write_tokens,
        csvMoney(b.cache_saved_usd),
        b.errors,
        b.refused,
      ]),
    );
  });

  router.get('/v1/workspaces/:workspace_id/usage/requests', session, async function listUsageRequests(ctx: Context) {
    const q = parseValid(requestsQuery, ctx.query);
    const csv = q.format === 'csv';
    const page = await usageRequests(deps, authOf(ctx), ctx.params.workspace_id, {
      ...q,
      errors_only: q.errors === 'true',
      refused: flag(q.refused),
      limit: csv ? MAX_CSV_REQUESTS : q.limit,
    });
    if (!csv) {
      ctx.body = page;
      return;
    }
    // More rows than one export holds: say so rather than cut silently.
    if (page.next_cursor) ctx.set('X-Tollgate-Truncated', String(MAX_CSV_REQUESTS));
    sendCsv(
      ctx,
      'usage-requests.csv',
      [
        'time',
        'request_id',
        'key_name',
        'key_prefix',
        'key_id',
        'team',
        'user',
        'model',
        'format',
        'status',
        'input_tokens',
        'output_tokens',
        'cache_read_tokens',
        'cache_write_tokens',
        'cache_write_1h_tokens',
        'web_search_requests',
        'cost_usd',
        'cache_saved_usd',
        'latency_ms',
        'deployment',
        'refusal_reason',
        'refused_count',
        'settled_at',
      ],
      page.requests.map((r) => [
        r.time,
        r.request_id,
        r.key_name,
        r.key_prefix,
        r.key_id,
        r.team_name,
        r.user_name,
        r.model,
        r.format,
        r.status,
        r.input_tokens,
        r.output_tokens,
        r.cache_read_tokens,
        r.cache_write_tokens,
        r.cache_write_1h_tokens,
        r.web_search_requests,
        csvMoney(r.cost_usd),
        csvMoney(r.cache_saved_usd),
        r.latency_ms,
        r.deployment,
        r.refusal_reason,
        r.refused_count,
        r.settled_at,
      ]),
    );
  });

  return router;
}
