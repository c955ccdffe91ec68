import { safeDroppedName } from '../dropped.js';
import type { CallState } from './steps/step.js';

/**
 * The one place a request's steps are observed, whatever its action: after
 * each step the edge copies what it decided onto the request's observation
 * (metrics, access log, trace), a refused step's included. Steps themselves only stamp timings inside the work they time
 * (the key lookup, the upstream relay).
 */
export function observeStep(step: string, s: CallState): void {
  const obs = s.obs;
  switch (step) {
    case 'key':
      if (s.key) {
        obs.keyId = s.key.id;
        obs.workspaceId = s.key.workspace_id;
      }
      return;
    case 'model':
      if (s.model) obs.model = s.model;
      return;
    case 'limits':
    case 'hold':
      if (s.detail) obs.detail = s.detail;
      // The hold is taken on a planned call: its provider request is there.
      if (s.held && s.up) {
        obs.outputLimit = s.outputLimit;
        obs.admittedAt = performance.now();
        obs.translated = s.up.translate !== undefined;
        obs.upstreamFormat = s.up.format;
        obs.dropped = s.up.dropped;
      }
      return;
    case 'forward': {
      obs.upstreamEndAt = performance.now();
      const { outcome, up } = s;
      if (!outcome || !up) return;
      obs.outcome = outcome.kind;
      obs.deployment = s.served?.id;
      obs.attempts = s.attempts;
      if (outcome.kind === 'failed') obs.error = outcome.error;
      // What the provider's answer held that the client's format cannot carry: known only now, so the log has it, not the header.
      if (up.translate) {
        const fromAnswer = up.translate.dropped();
        if (fromAnswer.length) obs.dropped = [...new Set([...obs.dropped, ...fromAnswer.map(safeDroppedName)])];
      }
      return;
    }
    case 'meter':
      if (s.bill?.status === 499) obs.clientClosed = true;
      if (obs.span && s.outcome?.kind === 'complete') obs.finishReasons = s.outcome.tap.finishReasons();
      return;
    case 'settle':
      if (s.bill?.kind === 'settle') {
        obs.costMicros = s.costMicros;
        const u = s.bill.usage;
        // Every prompt token, cached or not: what the provider read.
        obs.inputTokens = Math.max(1, u.inputTokens + u.cacheReadTokens + u.cacheWrite5mTokens + u.cacheWrite1hTokens);
        obs.outputTokens = Math.max(0, u.outputTokens);
        obs.settledAt = performance.now();
      }
      return;
  }
}
