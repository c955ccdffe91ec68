import type { KeyMoney } from '../../../shared/contract/money.js';
import type { UsageKeyMoney, UsageReport, UsageResult } from '../../../shared/contract/usage.js';
import { femtosToUsdText, microsToFemtos } from '../../../shared/money-units.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { retryOnConcurrencyConflict } from '../../db/retry-conflicts.js';
import { ledger_record_refusals, type RefusalRow } from '../../stores/refusals.js';
import { ledger_settle_usage_batch, usage_money_for_keys, type SettledMoney } from '../../stores/workspaces.js';
import type { KeyBudgetRow } from '../../stores/key-budget.js';

type KeyBudgetWire = Pick<KeyMoney, 'key_remaining_micros' | 'budget_micros' | 'budget_period' | 'period_start_ms' | 'budget_day'>;

/** The exact cost when the proxy gave it, else its micro-dollars: decimal text for the numeric column. */
function costText(r: UsageReport): string {
  return femtosToUsdText(r.cost_femtos === undefined ? microsToFemtos(r.cost_micros) : BigInt(r.cost_femtos));
}

function startedAt(r: UsageReport): Date | null {
  return r.started_at_ms === undefined ? null : new Date(r.started_at_ms);
}

/** The reports of calls that were served (billed, or recorded at no cost): not refusals. */
function served(reports: Map<string, UsageReport>): UsageReport[] {
  return [...reports.values()].filter((r) => r.refusal_reason === undefined);
}

/** The refusals among the reports, as the ledger records them. */
function refusalsOf(reports: Map<string, UsageReport>): RefusalRow[] {
  const rows: RefusalRow[] = [];
  for (const r of reports.values()) {
    if (r.refusal_reason === undefined) continue;
    rows.push({
      request_id: r.request_id,
      key_id: r.key_id,
      model: r.model || null,
      format: r.format ?? null,
      status: r.status ?? null,
      refusal_reason: r.refusal_reason,
      refused_count: r.refused_count ?? 1,
      started_at: startedAt(r),
    });
  }
  return rows;
}

/** What recording a batch found: whether each request id was recorded now, and every known key's money after the batch. */
interface Recorded {
  recorded: (requestId: string) => boolean;
  money: Map<string, SettledMoney>;
}

/**
 * Records settled requests, each exactly once (the ledger is idempotent on
 * request_id, so a retried report moves no money), and finds every key's
 * new balance and budget with their versions. The whole batch is one
 * statement: the control plane's cost per request is what the ledger row
 * costs, not a transaction and three round trips per batch. When a
 * workspace balance or a key budget runs out, proxies are told at once
 * through the change feed (in the same statement).
 */
async function record(deps: ControlPlaneDeps, reports: UsageReport[]): Promise<Recorded> {
  // A request id repeated inside one batch is one request: the last report of it counts.
  const unique = new Map(reports.map((r) => [r.request_id, r]));
  const rows = served(unique).map((r) => ({
    request_id: r.request_id,
    key_id: r.key_id,
    model: r.model,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    cost_usd: costText(r),
    format: r.format ?? null,
    status: r.status ?? null,
    latency_ms: r.latency_ms ?? null,
    deployment: r.deployment ?? null,
    cache_read_tokens: r.cache_read_tokens ?? 0,
    cache_write_tokens: r.cache_write_tokens ?? 0,
    cache_write_1h_tokens: r.cache_write_1h_tokens ?? 0,
    web_search_requests: r.web_search_requests ?? 0,
    cache_saved_usd: femtosToUsdText(BigInt(r.cache_saved_femtos ?? '0')),
    started_at: startedAt(r),
    held_at_ms: r.held_at_ms ?? null,
  }));
  const now = deps.clock.now();
  // The statement takes its row locks in one order, so concurrent batches should not deadlock;
  // should PostgreSQL still abort one (a lock order elsewhere, a serializable default), running it
  // again is safe, being idempotent by request id and its own transaction, and beats a 500.
  const { recorded, money } = await retryOnConcurrencyConflict(() => ledger_settle_usage_batch(deps.db, rows, now));
  // Refusals move no money: recorded apart, so the settlement statement stays the money's alone.
  const refused = await retryOnConcurrencyConflict(() => ledger_record_refusals(deps.db, refusalsOf(unique), now));
  return { recorded: (id) => refused.has(id) || recorded(id), money: new Map(money.map((m) => [m.key_id, m])) };
}

/** Records the batch; the answer per report, in order (what proxies from before the per-key answer read). */
export async function recordUsage(deps: ControlPlaneDeps, reports: UsageReport[]): Promise<UsageResult[]> {
  const { recorded, money } = await record(deps, reports);
  return reports.map((r) => {
    const a = money.get(r.key_id);
    return {
      request_id: r.request_id,
      recorded: recorded(r.request_id),
      workspace_id: a?.workspace_id ?? null,
      balance_micros: a ? a.balance_micros : 0,
      balance_version: a ? a.balance_version : 0,
      key_version: a ? a.key_version : 0,
      ...keyBudget(a),
    };
  });
}

/** Records the batch; the answer per key (`?answer=keys`): each known key's money after the batch, once. */
export async function recordUsageByKey(deps: ControlPlaneDeps, reports: UsageReport[]): Promise<UsageKeyMoney[]> {
  const { money } = await record(deps, reports);
  return [...money.values()].map((a) => ({
    key_id: a.key_id,
    workspace_id: a.workspace_id,
    balance_micros: a.balance_micros,
    balance_version: a.balance_version,
    key_version: a.key_version,
    ...keyBudget(a),
  }));
}

/**
 * A key's money as committed now, with the row versions it was read at: what
 * a proxy founds a hold account on after Redis lost it. null for an unknown key.
 */
export async function keyMoney(deps: ControlPlaneDeps, keyId: string): Promise<KeyMoney | null> {
  const [m] = await usage_money_for_keys(deps.db, [keyId], deps.clock.now());
  if (!m) return null;
  return {
    workspace_id: m.workspace_id,
    balance_micros: Number(m.balance_micros),
    balance_version: Number(m.balance_version),
    key_version: Number(m.key_version),
    ...keyBudget(m),
  };
}

/** A key's budget fields as the wire carries them (numbers, whatever the driver returned). */
export function keyBudget(a: KeyBudgetRow | undefined): KeyBudgetWire {
  if (!a) return { key_remaining_micros: null };
  const num = (v: number | null): number | null => (v === null ? null : Number(v));
  return {
    key_remaining_micros: num(a.key_remaining_micros),
    budget_micros: num(a.budget_micros),
    budget_period: a.budget_period,
    period_start_ms: num(a.period_start_ms),
    budget_day: Number(a.budget_day),
  };
}
