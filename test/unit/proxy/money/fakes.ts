import { pino, type Logger } from 'pino';
import type { UsageKeyMoney, UsageReport, UsageResult } from '../../../../shared/contract/usage.js';
import type { ReportText } from '../../../../proxy/control-plane-client.js';
import type { OutboxRecord } from '../../../../proxy/money/outbox.js';
import { settlementOf, type Settlement } from '../../../../proxy/money/settlement.js';

export const KEY = '00000000-0000-4000-8000-000000000001';

export function report(n: number, over: Partial<UsageReport> = {}): UsageReport {
  return { request_id: `req_${n}`, key_id: KEY, model: 'tg/sonnet', input_tokens: 10, output_tokens: 10, cost_micros: 100, ...over };
}

export function record(n: number): OutboxRecord {
  return { report: report(n), workspaceId: 'ws1', keyBudget: true };
}

/** A settled call's record as metering hands it on. */
export function settlement(n: number): Settlement {
  return settlementOf(record(n));
}

/** What the control plane was sent, read back. */
export function reportsOf(sent: readonly ReportText[]): UsageReport[] {
  return sent.map((r) => JSON.parse(r.json) as UsageReport);
}

/** Per-report results as the per-key answer: each known key's money once (the last result of it). */
export function perKey(reports: readonly UsageReport[], results: readonly UsageResult[]): UsageKeyMoney[] {
  const keys = new Map<string, UsageKeyMoney>();
  results.forEach((r, i) => {
    if (r.workspace_id === null) return;
    const key_id = reports[i]!.key_id;
    const { workspace_id, balance_micros, balance_version, key_remaining_micros, key_version } = r;
    keys.set(key_id, { key_id, workspace_id, balance_micros, balance_version, key_remaining_micros, key_version });
  });
  return [...keys.values()];
}

/** The control plane's answer to a recorded report. */
export function result(r: UsageReport, over: Partial<UsageResult> = {}): UsageResult {
  return {
    request_id: r.request_id,
    recorded: true,
    workspace_id: 'ws1',
    balance_micros: 5_000,
    balance_version: 2,
    key_remaining_micros: 900,
    key_version: 3,
    ...over,
  };
}

/** A logger that keeps the messages of its warnings and errors (never the objects: they may hold errors with stacks). */
export function quietLogger(): Logger & { warnings: string[]; errors: string[] } {
  const logger = pino({ level: 'silent' }) as Logger & { warnings: string[]; errors: string[] };
  logger.warnings = [];
  logger.errors = [];
  logger.warn = ((_o: unknown, msg: string) => void logger.warnings.push(msg)) as Logger['warn'];
  logger.error = ((_o: unknown, msg: string) => void logger.errors.push(msg)) as Logger['error'];
  return logger;
}
