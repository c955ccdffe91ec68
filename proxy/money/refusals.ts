import type { RefusalReason, UsageReport } from '../../shared/contract/usage.js';
import type { Logger } from '../../shared/logger.js';
import type { UsageFormat } from '../call.js';

/** A call the proxy itself refused, of a key it knows (docs/proxy.md, refusals). */
export interface RefusedCall {
  requestId: string;
  keyId: string;
  workspaceId: string;
  /** The model the call asked for; empty when it was refused before its body was read. */
  model: string;
  reason: RefusalReason;
  format: UsageFormat;
  status: number;
  /** When the proxy received the call, ms since the epoch. */
  startedAtMs: number;
}

/**
 * How long refusals gather before they are reported: every refusal of one
 * key, model, reason, format and status within it is one report (one
 * ledger row) with its count. A key hammering a 429 or a 402 costs the
 * ledger about one row per second, however many calls it makes.
 */
export const REFUSAL_WINDOW_MS = 1_000;
/**
 * The most groups one window reports; refusals past it (a flood over many
 * keys and models at once) are counted in the log line and dropped, so
 * neither the proxy's memory nor the ledger grows with a flood.
 */
export const REFUSAL_MAX_GROUPS = 1_000;

/** A model name as long as the ledger keeps (the contract's 200 characters). */
const MODEL_MAX = 200;

interface Group {
  first: RefusedCall;
  count: number;
}

export interface RefusalCounter {
  /** Counts one refusal: a map update, never a wait, never an error. */
  count(call: RefusedCall): void;
  /** Reports what has gathered now (shutdown, drain). */
  flush(): void;
  /** Refusals counted and not yet reported. */
  pending(): number;
  /** Reports what has gathered, and counts no window further (shutdown). */
  stop(): void;
}

export interface RefusalCounterDeps {
  logger: Logger;
  /** Hands one group's report to the usage path (the batcher, then the outbox and the reporter). */
  report(report: UsageReport, workspaceId: string): void;
  windowMs?: number;
  maxGroups?: number;
}

/**
 * Counts refusals per key, model, reason, format and status and reports each
 * group once per window through the usage path, at no cost: the report's
 * request id is the group's first call's, so a retried batch records it
 * once, and `refused_count` says how many calls it stands for.
 */
export function createRefusalCounter(deps: RefusalCounterDeps): RefusalCounter {
  const windowMs = deps.windowMs ?? REFUSAL_WINDOW_MS;
  const maxGroups = deps.maxGroups ?? REFUSAL_MAX_GROUPS;
  let groups = new Map<string, Group>();
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const gathered = groups;
    groups = new Map();
    if (dropped) deps.logger.warn({ dropped, groups: maxGroups }, 'refusals past the per-window limit were not reported to usage');
    dropped = 0;
    for (const g of gathered.values()) {
      const c = g.first;
      deps.report(
        {
          request_id: c.requestId,
          key_id: c.keyId,
          model: c.model,
          input_tokens: 0,
          output_tokens: 0,
          cost_micros: 0,
          format: c.format,
          status: c.status,
          latency_ms: 0,
          started_at_ms: c.startedAtMs,
          refusal_reason: c.reason,
          refused_count: g.count,
        },
        c.workspaceId,
      );
    }
  }

  return {
    count(call) {
      if (stopped) return;
      const model = call.model.length > MODEL_MAX ? call.model.slice(0, MODEL_MAX) : call.model;
      const id = `${call.keyId}\n${model}\n${call.reason}\n${call.format}\n${call.status}`;
      const group = groups.get(id);
      if (group) {
        group.count++;
        return;
      }
      if (groups.size >= maxGroups) {
        dropped++;
        return;
      }
      groups.set(id, { first: model === call.model ? call : { ...call, model }, count: 1 });
      // Not kept alive for: a process with nothing else to do may end; shutdown flushes first.
      timer ??= setTimeout(flush, windowMs).unref();
    },
    flush,
    pending: () => groups.size,
    stop() {
      flush();
      stopped = true;
    },
  };
}
