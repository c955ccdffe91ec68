import { capOutput } from '../../money/ceiling.js';
import type { EdgeDeps, Modelled, StepOutcome } from './step.js';

/**
 * Step `access` (400): the provider's request, in the provider's format.
 * Built before anything is held or counted, so a call the translation
 * refuses (a field the provider's format cannot express) costs nothing.
 */
export function planUpstream(s: Modelled, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  const up = deps.bodies.plan(s.route.format, s.call, s.model, s.provider, s.req.headers);
  if (!(up instanceof Promise)) {
    s.up = capOutput(up, s.call, s.model);
    return undefined;
  }
  return up.then((planned) => {
    s.up = capOutput(planned, s.call, s.model);
    return undefined;
  });
}
