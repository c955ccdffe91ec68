import type { RefusalReason } from '../../../shared/contract/usage.js';
import { invalidInput } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { isAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import {
  team_ids_for_member,
  usage_aggregate,
  usage_labels,
  usage_request_list,
  type UsageFilter,
  type UsageGranularity,
  type UsageGrouping,
  type UsageRequestRow,
} from '../../stores/usage.js';
import { loadWorkspace } from '../auth/access.js';
import { api_key_list_for_workspace } from '../../stores/api-keys.js';
import { keyView, type KeyView } from './keys.js';

const DAY_MS = 86_400_000;
/** The widest range each granularity answers: a year of days, a month of hours. */
const MAX_RANGE_MS: Record<UsageGranularity, number> = { day: 366 * DAY_MS, hour: 31 * DAY_MS };
const DEFAULT_RANGE_MS: Record<UsageGranularity, number> = { day: 30 * DAY_MS, hour: DAY_MS };

export interface UsageQuery {
  from?: Date;
  to?: Date;
  key_id?: string;
  team_id?: string;
  model?: string;
  user_id?: string;
  /** Only calls Tollgate refused (true) or served (false). */
  refused?: boolean;
  reason?: RefusalReason;
}

export interface UsageTotals {
  spend_usd: number;
  requests: number;
  /** Uncached prompt tokens. */
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Spend with every prompt token at the input price, minus spend (negative when cache writes outweighed reads). */
  cache_saved_usd: number;
  errors: number;
  /** Calls Tollgate itself refused (not in `requests`, no cost). */
  refused: number;
}

export interface UsageSummary {
  from: string;
  to: string;
  granularity: UsageGranularity;
  group_by: UsageGrouping;
  totals: UsageTotals;
  /**
   * Each group's totals, biggest spend first; `label` names it (key name and prefix, team name, user name, model).
   * Grouped by key, each known key's budget as it stands now, whatever the range (docs/keys.md).
   */
  groups: (UsageTotals & { id: string | null; label: string } & Partial<KeyBudgetNow>)[];
  /** Non-empty (bucket, group) cells, oldest first; `bucket` is the UTC start of the day or hour. */
  buckets: (UsageTotals & { bucket: string; group_id: string | null })[];
}

function zero(): UsageTotals {
  return {
    spend_usd: 0,
    requests: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cache_saved_usd: 0,
    errors: 0,
    refused: 0,
  };
}

function addInto(into: UsageTotals, row: UsageTotals): void {
  into.spend_usd += row.spend_usd;
  into.requests += row.requests;
  into.input_tokens += row.input_tokens;
  into.output_tokens += row.output_tokens;
  into.cache_read_tokens += row.cache_read_tokens;
  into.cache_write_tokens += row.cache_write_tokens;
  into.cache_saved_usd += row.cache_saved_usd;
  into.errors += row.errors;
  into.refused += row.refused;
}

/**
 * Sums of float dollars drift in the last bits; answers keep nine decimals
 * (a nanodollar), the most a float dollar figure of realistic size holds
 * exactly. The ledger itself is exact to the femtodollar.
 */
function roundMoney(totals: UsageTotals): UsageTotals {
  return { ...totals, spend_usd: Math.round(totals.spend_usd * 1e9) / 1e9, cache_saved_usd: Math.round(totals.cache_saved_usd * 1e9) / 1e9 };
}

/**
 * The filter every usage query runs with: the workspace (of the caller's
 * org), the range, and for a member only the keys of their own teams, the
 * keys they may list. Admins see the whole workspace.
 */
async function scopedFilter(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  q: UsageQuery,
  granularity: UsageGranularity,
): Promise<UsageFilter> {
  const workspace = await loadWorkspace(deps.db, auth, rawWorkspaceId);
  const to = q.to ?? deps.clock.now();
  const from = q.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS[granularity]);
  if (from.getTime() >= to.getTime()) throw invalidInput('from: must be before to');
  if (to.getTime() - from.getTime() > MAX_RANGE_MS[granularity]) {
    throw invalidInput(`to: the range may span at most ${granularity === 'day' ? '366 days' : '31 days of hours'} at granularity ${granularity}`);
  }
  return {
    workspace_id: workspace.id,
    from,
    to,
    key_id: q.key_id,
    team_id: q.team_id,
    model: q.model,
    user_id: q.user_id,
    refused: q.refused,
    reason: q.reason,
    team_ids: isAdmin(auth) ? undefined : await team_ids_for_member(deps.db, workspace.id, auth.userId),
  };
}

/** The label of a group without an id: a key's row gone, a team key's owner, a call served (no refusal reason). */
const UNNAMED: Record<UsageGrouping, string> = {
  model: 'None (refused before its body was read)',
  key: 'Deleted',
  team: 'Deleted',
  user: 'Team keys (no owner)',
  deployment: 'Not recorded',
  reason: 'Served',
};

type KeyBudgetNow = Pick<KeyView, 'budget_usd' | 'budget_period' | 'period_spend_usd' | 'period_resets_at'>;

/** The workspace's keys' budgets now: a period budget's spend and reset beside the usage grouped by key. */
async function keyBudgetsNow(deps: ControlPlaneDeps, workspaceId: string): Promise<Map<string, KeyBudgetNow>> {
  const now = deps.clock.now();
  const keys = await api_key_list_for_workspace(deps.db, workspaceId, {});
  return new Map(
    keys.map((k) => {
      const v = keyView(k, now);
      return [
        k.id,
        { budget_usd: v.budget_usd, budget_period: v.budget_period, period_spend_usd: v.period_spend_usd, period_resets_at: v.period_resets_at },
      ];
    }),
  );
}

export async function usageSummary(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  q: UsageQuery & { granularity: UsageGranularity; group_by: UsageGrouping },
): Promise<UsageSummary> {
  const filter = await scopedFilter(deps, auth, rawWorkspaceId, q, q.granularity);
  const [rows, labels] = await Promise.all([
    usage_aggregate(deps.db, filter, q.granularity, q.group_by),
    q.group_by === 'model' || q.group_by === 'deployment' || q.group_by === 'reason'
      ? Promise.resolve([])
      : usage_labels(deps.db, filter.workspace_id),
  ]);
  const names = new Map(labels.filter((l) => l.kind === q.group_by).map((l) => [l.id, l.label]));
  const unnamed = UNNAMED[q.group_by];
  const budgets = q.group_by === 'key' ? await keyBudgetsNow(deps, filter.workspace_id) : undefined;
  const totals = zero();
  const groups = new Map<string | null, UsageTotals & { id: string | null; label: string }>();
  for (const row of rows) {
    addInto(totals, row);
    let group = groups.get(row.group_id);
    if (!group) {
      group = { id: row.group_id, label: row.group_id === null ? unnamed : (names.get(row.group_id) ?? row.group_id), ...zero() };
      groups.set(row.group_id, group);
    }
    addInto(group, row);
  }
  return {
    from: filter.from.toISOString(),
    to: filter.to.toISOString(),
    granularity: q.granularity,
    group_by: q.group_by,
    totals: roundMoney(totals),
    groups: [...groups.values()]
      .map((g) => ({ ...g, ...roundMoney(g), ...budgets?.get(g.id ?? '') }))
      .sort((a, b) => b.spend_usd - a.spend_usd || b.requests - a.requests),
    buckets: rows.map((r) => ({
      bucket: new Date(r.bucket).toISOString(),
      group_id: r.group_id,
      spend_usd: r.spend_usd,
      requests: r.requests,
      input_tokens: r.input_tokens,
      output_tokens: r.output_tokens,
      cache_read_tokens: r.cache_read_tokens,
      cache_write_tokens: r.cache_write_tokens,
      cache_saved_usd: r.cache_saved_usd,
      errors: r.errors,
      refused: r.refused,
    })),
  };
}

/**
 * One row of the request log: the ledger row's detail; `time` when the proxy
 * received the call, `settled_at` when the control plane recorded it (ISO 8601).
 */
export type UsageRequest = Omit<UsageRequestRow, 'id' | 'created_at' | 'started_at'> & { time: string; settled_at: string };

function requestOf({ id: _id, created_at, started_at, ...rest }: UsageRequestRow): UsageRequest {
  return { time: new Date(started_at).toISOString(), settled_at: new Date(created_at).toISOString(), ...rest };
}

/** The page cursor names the last row of a page; opaque to clients. */
function encodeCursor(r: UsageRequestRow): string {
  return Buffer.from(`r${r.id}`).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const match = /^r(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw invalidInput('cursor: not a cursor this API gave out');
  return match[1]!;
}

/** The per-request log, newest first, one page at a time (`next_cursor` is null on the last page). */
export async function usageRequests(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  q: UsageQuery & { errors_only?: boolean; limit: number; cursor?: string },
): Promise<{ requests: UsageRequest[]; next_cursor: string | null }> {
  const filter = { ...(await scopedFilter(deps, auth, rawWorkspaceId, q, 'day')), errors_only: q.errors_only };
  const afterId = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  const rows = await usage_request_list(deps.db, filter, { limit: q.limit + 1, after_id: afterId });
  const page = rows.slice(0, q.limit);
  return { requests: page.map(requestOf), next_cursor: rows.length > q.limit ? encodeCursor(page.at(-1)!) : null };
}
