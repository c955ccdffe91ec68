import type { UsageReport, UsageResult } from '../../../shared/contract/usage.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { ledger_record_usage_batch, usage_money_for_keys } from '../../stores/workspaces.js';

/** Integer micro-dollars as exact decimal text for the numeric column. */
function microsToDecimal(micros: number): string {
  const whole = Math.floor(micros / 1_000_000);
  return `${whole}.${String(micros - whole * 1_000_000).padStart(6, '0')}`;
}

/**
 * Records settled requests, each exactly once (the ledger is idempotent on
 * request_id, so a retried report moves no money), in one transaction per
 * batch, and answers every key's new balance and budget with their versions.
 * The ledger row is the audit record of usage. When a workspace balance or a
 * key budget runs out, proxies are told at once through the change feed.
 */
export async function recordUsage(deps: ControlPlaneDeps, reports: UsageReport[]): Promise<UsageResult[]> {
  const keyIds = [...new Set(reports.map((r) => r.key_id))];
  return deps.db.transaction(async (tx) => {
    const before = new Map((await usage_money_for_keys(tx, keyIds)).map((m) => [m.key_id, m]));
    const unique = new Map(reports.map((r) => [r.request_id, r]));
    const inserted = await ledger_record_usage_batch(
      tx,
      [...unique.values()].map((r) => ({
        request_id: r.request_id,
        key_id: r.key_id,
        model: r.model,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cost_usd: microsToDecimal(r.cost_micros),
        format: r.format ?? null,
        status: r.status ?? null,
        latency_ms: r.latency_ms ?? null,
      })),
      deps.clock.now(),
    );
    const after = new Map((await usage_money_for_keys(tx, keyIds)).map((m) => [m.key_id, m]));
    const emptied = new Set<string>();
    for (const [keyId, a] of after) {
      const b = before.get(keyId);
      if (!b) continue;
      if (b.balance_micros > 0 && a.balance_micros <= 0 && !emptied.has(a.workspace_id)) {
        emptied.add(a.workspace_id);
        await change_feed_publish(tx, 'workspace', a.workspace_id);
      }
      if (!b.budget_exhausted && a.budget_exhausted) await change_feed_publish(tx, 'key', keyId);
    }
    return reports.map((r) => {
      const a = after.get(r.key_id);
      return {
        request_id: r.request_id,
        recorded: inserted.has(r.request_id),
        workspace_id: a?.workspace_id ?? null,
        balance_micros: a ? Number(a.balance_micros) : 0,
        balance_version: a ? Number(a.balance_version) : 0,
        key_remaining_micros: a?.key_remaining_micros ?? null,
        key_version: a ? Number(a.key_version) : 0,
      };
    });
  });
}
