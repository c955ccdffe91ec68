import type { ControlPlaneDeps } from '../deps.js';
import { api_key_find_by_id, api_key_money } from '../stores/api-keys.js';
import { change_feed_publish } from '../stores/change-feed.js';
import { ledger_record_usage, workspace_money } from '../stores/workspaces.js';
import { notFound } from '../../shared/errors.js';

export interface UsageReport {
  request_id: string;
  key_id: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
}

export interface UsageResult {
  recorded: boolean;
  workspace_id: string;
  balance_micros: number;
  balance_version: number;
  key_remaining_micros: number | null;
  key_version: number;
}

/**
 * Records one settled request exactly once (the ledger is idempotent on
 * request_id, so a retried report moves no money) and answers the new
 * balances with their versions. The ledger row is the audit record of usage.
 * When the balance or the key budget runs out, proxies are told at once.
 */
export async function recordUsage(deps: ControlPlaneDeps, report: UsageReport): Promise<UsageResult> {
  return deps.db.transaction(async (tx) => {
    const key = await api_key_find_by_id(tx, report.key_id);
    if (!key) throw notFound('Key');
    const before = await workspace_money(tx, key.workspace_id);
    const recorded = await ledger_record_usage(tx, {
      workspace_id: key.workspace_id,
      key_id: key.id,
      request_id: report.request_id,
      model: report.model,
      input_tokens: report.input_tokens,
      output_tokens: report.output_tokens,
      cost_usd: report.cost_micros / 1_000_000,
      now: deps.clock.now(),
    });
    const after = (await workspace_money(tx, key.workspace_id))!;
    const money = (await api_key_money(tx, key.id))!;
    if (recorded) {
      if (before && before.balance_micros > 0 && after.balance_micros <= 0) {
        await change_feed_publish(tx, 'workspace', key.workspace_id);
      }
      if (money.budget_exhausted) await change_feed_publish(tx, 'key', key.id);
    }
    return {
      recorded,
      workspace_id: key.workspace_id,
      balance_micros: Number(after.balance_micros),
      balance_version: Number(after.balance_version),
      key_remaining_micros: money.key_remaining_micros,
      key_version: Number(money.key_version),
    };
  });
}
