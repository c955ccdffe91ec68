import { upstreamCall } from '../../formats/index.js';
import type { CallState, StepOutcome } from './step.js';

/**
 * Step `access` (400): the provider's request, in the provider's format.
 * Built before anything is held or counted, so a call the translation
 * refuses (a field the provider's format cannot express) costs nothing.
 */
export function planUpstream(s: CallState): StepOutcome {
  s.up = upstreamCall(s.route.format, s.call!, s.model!, s.provider!);
  return undefined;
}
