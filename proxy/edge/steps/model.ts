import { decideModel } from '../../decide.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';

/** Step `model` (404, 403, 402): the alias is known, the key's team may use it, and money is left (decide.ts). */
export function findModel(s: CallState, deps: EdgeDeps): StepOutcome {
  const verdict = decideModel(s.key!, s.call!.alias, deps.config.models, deps.now());
  if (!verdict.ok) return verdict.error;
  s.model = verdict.model;
  s.provider = verdict.provider;
  return undefined;
}
