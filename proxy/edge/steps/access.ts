import { capOutput } from '../../money/ceiling.js';
import type { UpstreamCall } from '../../wire/index.js';
import type { CallState, EdgeDeps, Modelled, StepOutcome } from './step.js';

/** The provider's request with what the client's own framing dropped on its way to the pivot named first (a Converse client's). */
export function withClientDrops(s: CallState, up: UpstreamCall): UpstreamCall {
  return s.clientDropped.length === 0 ? up : { ...up, dropped: [...new Set([...s.clientDropped, ...up.dropped])] };
}

/**
 * Step `access` (400): the provider's request, in the provider's format.
 * Built before anything is held or counted, so a call the translation
 * refuses (a field the provider's format cannot express) costs nothing.
 */
export function planUpstream(s: Modelled, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  const up = deps.bodies.plan(s.route.format, s.call, s.model, s.provider, s.req.headers);
  if (!(up instanceof Promise)) {
    s.up = withClientDrops(s, capOutput(up, s.call, s.model));
    return undefined;
  }
  return up.then((planned) => {
    s.up = withClientDrops(s, capOutput(planned, s.call, s.model));
    return undefined;
  });
}
