import type { CallState } from './steps/step.js';

/**
 * The one place a call's steps are observed: after each step the edge
 * copies what it decided onto the call's observation (metrics, access log,
 * trace). Steps themselves only stamp timings inside the work they time
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
      if (s.held) {
        obs.admittedAt = performance.now();
        obs.translated = s.up!.translate !== undefined;
        obs.upstreamFormat = s.up!.format;
      }
      return;
    case 'forward':
      obs.upstreamEndAt = performance.now();
      obs.outcome = s.outcome!.kind;
      obs.deployment = s.served?.id;
      obs.attempts = s.attempts;
      if (s.outcome!.kind === 'failed') obs.error = s.outcome!.error;
      return;
    case 'meter':
      if (obs.span && s.outcome!.kind === 'complete') obs.finishReasons = s.outcome!.tap.finishReasons();
      return;
    case 'settle':
      if (s.bill?.kind === 'settle') {
        obs.costMicros = s.costMicros;
        obs.inputTokens = Math.max(1, s.bill.inputTokens);
        obs.outputTokens = Math.max(0, s.bill.outputTokens);
        obs.settledAt = performance.now();
      }
      return;
  }
}
