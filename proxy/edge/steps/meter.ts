import { plainUsage, type Usage } from '../../call.js';
import { outputCeiling } from '../../wire/index.js';
import type { AbandonedEnd } from '../../abandoned.js';
import type { UsageTap } from '../../wire/usage-tap.js';
import type { Bill, CallState, EdgeDeps, Forwarded, Planned, StepOutcome } from './step.js';

/**
 * Step `meter`: what the answer is billed, by how it ended. A failed or
 * refused call hands its hold back; a complete one is billed what the
 * provider reported (everything it was allowed when it reported nothing
 * or malformed counts);
 * a cut-short one what was seen (499 when the client went away, as nginx
 * logs it; 502 when the provider broke off mid-answer); an abandoned one
 * (the client left, the answer was read on) what the provider reported.
 */
export function meterUsage(s: Forwarded, deps: EdgeDeps): StepOutcome {
  const outcome = s.outcome;
  switch (outcome.kind) {
    case 'retry': // routing ends on one only when the client left; nothing was billed
      s.bill = { kind: 'release', status: 503 };
      return undefined;
    case 'failed':
      s.bill = { kind: 'release', status: outcome.error.status };
      return undefined;
    case 'upstream-error':
      s.bill = { kind: 'release', status: outcome.status };
      return undefined;
    case 'complete': {
      const usage = reported(s, deps, outcome.tap);
      s.bill = usage ? { kind: 'settle', usage, format: s.up.format, status: undefined } : billTheHold(s, undefined);
      return undefined;
    }
    case 'abandoned':
      s.bill = abandonedBill(s, deps, outcome.tap, outcome.ended);
      return undefined;
    case 'cut':
      s.bill = billWhatWasSeen(s, outcome.tap, outcome.by === 'client' ? 499 : 502);
      return undefined;
  }
}

/**
 * The usage the provider reported, or undefined when it reported none or a
 * malformed count (the format's usage reader answers that as none:
 * wire/usage-reader.ts `malformedCounts`): billed the hold, warned once per
 * provider per episode (money/usage-warnings.ts).
 */
function reported(s: CallState, deps: EdgeDeps, tap: UsageTap | undefined): Usage | undefined {
  const usage = tap?.usage();
  const provider = s.provider?.name ?? '';
  if (!usage) {
    deps.usageWarnings.missing(provider, s.requestId);
    return undefined;
  }
  deps.usageWarnings.reported(provider);
  return usage;
}

/** Everything the call was allowed: the input estimate and the output ceiling (what was held). */
function billTheHold(s: Planned, status: number | undefined): Bill {
  return { kind: 'settle', usage: plainUsage(s.inputEstimate, outputCeiling(s.call, s.model)), format: s.up.format, status };
}

/** What the provider had reported (a Messages stream says the prompt's split first), else the estimate; the output seen. */
function billWhatWasSeen(s: Planned, tap: UsageTap | undefined, status: number): Bill {
  // A malformed prompt split is no split (the reader reports none): the input estimate is billed instead.
  const reported = tap?.reportedSoFar() ?? plainUsage(s.inputEstimate, 0);
  return { kind: 'settle', usage: { ...reported, outputTokens: tap?.outputSeen() ?? 0 }, format: s.up.format, status };
}

/**
 * The client left and the answer was read on for its bill (docs/proxy.md,
 * "A client that leaves"), always logged 499: read to its end, what the
 * provider reported (the hold when it reported nothing); the provider's own
 * error, nothing; broken off by the provider, what was seen, as any cut;
 * not read to its end (over the proxy's limit of such reads, or past their
 * time), the hold, since what the provider will bill is unknown.
 */
function abandonedBill(s: Planned, deps: EdgeDeps, tap: UsageTap | undefined, ended: AbandonedEnd): Bill {
  switch (ended) {
    case 'complete': {
      const usage = reported(s, deps, tap);
      return usage ? { kind: 'settle', usage, format: s.up.format, status: 499 } : billTheHold(s, 499);
    }
    case 'error':
      return { kind: 'release', status: 499 };
    case 'broken':
      return billWhatWasSeen(s, tap, 499);
    case 'timeout':
    case 'over_limit':
      return billTheHold(s, 499);
  }
}
