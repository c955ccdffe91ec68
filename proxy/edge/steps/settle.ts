import { sendCallError } from '../answer.js';
import type { EdgeDeps, Metered, StepOutcome } from './step.js';

/**
 * Step `settle`: the bill handed to metering (docs/design.md, money), which
 * queues the usage report and releases the hold once the control plane has
 * it. A provider that could not be reached is answered here, after its hold
 * went back, with the limit headers the call earned.
 */
export function settleCall(s: Metered, deps: EdgeDeps): StepOutcome {
  const bill = s.bill;
  const held = s.held;
  if (bill.kind === 'release') {
    deps.metering.release(held, bill.status);
    s.accounted = true;
    const outcome = s.outcome;
    if (outcome.kind === 'failed') {
      // A provider without usable credentials ('unavailable') is logged by its token source once per episode (upstream-auth/), not per call.
      if (outcome.error.kind !== 'unavailable')
        deps.logger.warn({ requestId: s.requestId, err: (outcome.error.cause as Error | undefined)?.message }, 'upstream failed');
      sendCallError(s.res, s.route, outcome.error, s.limitHeaders);
    }
    return undefined;
  }
  s.costMicros = deps.metering.settle(held, bill.usage, bill.format, bill.status);
  s.accounted = true;
  return undefined;
}
