import { upstreamCall } from '../../formats/index.js';
import type { CallState, StepOutcome } from './step.js';

/**
 * Step `access` (400): the provider's request, in the provider's format.
 * Built before anything is held or counted, so a call the translation
 * refuses (a field the provider's format cannot express) costs nothing.
 */
export function planUpstream(s: CallState): StepOutcome {
  const { format } = s.route;
  s.up = upstreamCall(format, s.call!, s.model!, s.provider!, format === 'messages' ? s.search : '');
  return undefined;
}
