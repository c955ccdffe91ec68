import { plainUsage } from '../../call.js';
import { outputCeiling } from '../../formats/index.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';

/**
 * Step `meter`: what the answer is billed, by how it ended. A failed or
 * refused call hands its hold back; a complete one is billed what the
 * provider reported (everything it was allowed when it reported nothing
 * or malformed counts);
 * a cut-short one what was seen (499 when the client went away, as nginx
 * logs it; 502 when the provider broke off mid-answer).
 */
export function meterUsage(s: CallState, deps: EdgeDeps): StepOutcome {
  const outcome = s.outcome!;
  switch (outcome.kind) {
    case 'retry': // routing never ends on one (it turns it into 'failed'); nothing was sent
      s.bill = { kind: 'release', status: 503 };
      return undefined;
    case 'failed':
      s.bill = { kind: 'release', status: outcome.error.status };
      return undefined;
    case 'upstream-error':
      s.bill = { kind: 'release', status: outcome.status };
      return undefined;
    case 'complete': {
      const usage = outcome.tap.usage();
      const provider = s.provider?.name ?? '';
      if (usage) {
        deps.usageWarnings.reported(provider);
        s.bill = { kind: 'settle', usage, format: s.up!.format, status: undefined };
        return undefined;
      }
      deps.usageWarnings.missing(provider, s.requestId);
      s.bill = { kind: 'settle', usage: plainUsage(s.inputEstimate, outputCeiling(s.call!, s.model!)), format: s.up!.format, status: undefined };
      return undefined;
    }
    case 'cut': {
      const tap = outcome.tap;
      // What the provider had reported (a Messages stream says the prompt's split first), else the estimate; the output seen.
      const reported = tap?.reportedSoFar() ?? plainUsage(s.inputEstimate, 0);
      s.bill = {
        kind: 'settle',
        usage: { ...reported, outputTokens: tap?.outputSeen() ?? 0 },
        format: s.up!.format,
        status: outcome.by === 'client' ? 499 : 502,
      };
      return undefined;
    }
  }
}
