import { decideModel } from '../../decide.js';
import type { EdgeDeps, Parsed, StepOutcome } from './step.js';

/** Step `model` (404, 403, 402): the alias is known, the key's team may use it, and money is left (decide.ts). */
export function findModel(s: Parsed, deps: EdgeDeps): StepOutcome {
  const verdict = decideModel(s.key, s.call.alias, deps.config.models, deps.now());
  if (!verdict.ok) {
    // Which money ran out, for the refusal's reason (refusal.ts) and the access log.
    if (verdict.error.kind === 'insufficient_funds') s.detail = s.key.balance_micros <= 0 ? 'balance' : 'budget';
    return verdict.error;
  }
  s.model = verdict.model;
  // A client name becomes the alias here, so what follows (the provider's body, a translated answer, usage) sees the alias.
  s.call.alias = verdict.model.alias;
  s.provider = verdict.provider;
  return undefined;
}
