import { expect } from 'chai';
import { AppError } from '../../../../shared/errors.js';
import { outputCeiling } from '../../../../proxy/wire/index.js';
import type { UsageTap } from '../../../../proxy/wire/usage-tap.js';
import type { ForwardOutcome } from '../../../../proxy/forward.js';
import { meterUsage } from '../../../../proxy/edge/steps/meter.js';
import type { Forwarded } from '../../../../proxy/edge/steps/step.js';
import { plainUsage } from '../../../../proxy/call.js';
import { fakeHeld, fakeDeps, plannedState } from './fakes.js';

function tap(usage: { inputTokens: number; outputTokens: number } | undefined, input?: number, seen = 0): UsageTap {
  return {
    feed: () => undefined,
    usage: () => usage && plainUsage(usage.inputTokens, usage.outputTokens),
    reportedSoFar: () => (input === undefined ? undefined : plainUsage(input, 0)),
    outputSeen: () => seen,
    finishReasons: () => [],
  };
}

/** A settle bill of plain usage on the Chat provider the fakes plan. */
const settled = (input: number, output: number, status: number | undefined) => ({
  kind: 'settle',
  usage: plainUsage(input, output),
  format: 'chat',
  status,
});

function meter(outcome: ForwardOutcome) {
  const { deps, asked } = fakeDeps();
  const planned = plannedState(deps);
  const s: Forwarded = { ...planned, inputEstimate: 30, up: { ...planned.up, format: 'chat' }, held: fakeHeld(), outcome };
  expect(meterUsage(s, deps)).to.equal(undefined);
  return { s, asked };
}

describe('edge step meter: what the answer is billed, by how it ended', () => {
  it("hands the hold back for a call that never reached the provider, with the proxy's error status", () => {
    const { s } = meter({ kind: 'failed', error: new AppError('upstream_unreachable', 'x') });
    expect(s.bill).to.deep.equal({ kind: 'release', status: 502 });
  });

  it("hands the hold back for the provider's own error, with its status", () => {
    expect(meter({ kind: 'upstream-error', status: 529 }).s.bill).to.deep.equal({ kind: 'release', status: 529 });
  });

  it('bills a complete answer what the provider reported', () => {
    const { s, asked } = meter({ kind: 'complete', tap: tap({ inputTokens: 12, outputTokens: 34 }) });
    expect(s.bill).to.deep.equal(settled(12, 34, undefined));
    expect(asked.warnings).to.deep.equal([]);
  });

  it('bills a complete answer without usage everything it was allowed (the estimate and the output ceiling), and warns', () => {
    const { s, asked } = meter({ kind: 'complete', tap: tap(undefined) });
    expect(s.bill).to.deep.equal(settled(30, outputCeiling(s.call, s.model), undefined));
    expect(asked.warnings).to.have.length(1);
  });

  it('bills a cut answer what was seen: 499 when the client left, 502 when the provider broke off', () => {
    const byClient = meter({ kind: 'cut', tap: tap(undefined, 11, 5), headersSent: true, by: 'client' }).s.bill;
    expect(byClient).to.deep.equal(settled(11, 5, 499));
    const byUpstream = meter({ kind: 'cut', tap: tap(undefined, undefined, 3), headersSent: true, by: 'upstream' }).s.bill;
    expect(byUpstream).to.deep.equal(settled(30, 3, 502));
  });

  it('a cut before any answer was read bills the input estimate and no output', () => {
    const bill = meter({ kind: 'cut', tap: undefined, headersSent: false, by: 'client' }).s.bill;
    expect(bill).to.deep.equal(settled(30, 0, 499));
  });

  describe('a call whose client left and whose answer was read on (499 in every case)', () => {
    it('read to its end: what the provider reported', () => {
      const bill = meter({ kind: 'abandoned', tap: tap({ inputTokens: 200_000, outputTokens: 900 }), ended: 'complete' }).s.bill;
      expect(bill).to.deep.equal(settled(200_000, 900, 499));
    });

    it("read to its end without usage, cut at the read limit or over the proxy's limit of reads: the hold", () => {
      for (const [t, ended] of [
        [tap(undefined), 'complete'],
        [tap(undefined, 11, 5), 'timeout'],
        [undefined, 'over_limit'],
      ] as const) {
        const { s } = meter({ kind: 'abandoned', tap: t, ended });
        expect(s.bill, ended).to.deep.equal(settled(30, outputCeiling(s.call, s.model), 499));
      }
    });

    it("the provider's own error: released unbilled; the provider broke off: what was seen", () => {
      expect(meter({ kind: 'abandoned', tap: undefined, ended: 'error' }).s.bill).to.deep.equal({ kind: 'release', status: 499 });
      expect(meter({ kind: 'abandoned', tap: tap(undefined, 11, 5), ended: 'broken' }).s.bill).to.deep.equal(settled(11, 5, 499));
    });
  });
});
