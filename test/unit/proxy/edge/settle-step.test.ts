import { expect } from 'chai';
import { plainUsage } from '../../../../proxy/call.js';
import type { ServerResponse } from 'node:http';
import { AppError } from '../../../../shared/errors.js';
import { settleCall } from '../../../../proxy/edge/steps/settle.js';
import type { Bill, Metered } from '../../../../proxy/edge/steps/step.js';
import type { ForwardOutcome } from '../../../../proxy/forward.js';
import { fakeHeld, fakeDeps, plannedState } from './fakes.js';

/** The little of a response `sendError` uses, recording what was sent. */
function fakeResponse() {
  const sent: { status: number; headers: Record<string, unknown>; body: string }[] = [];
  let head: { status: number; headers: Record<string, unknown> } | undefined;
  const res = {
    headersSent: false,
    writeHead(status: number, headers: Record<string, unknown>) {
      head = { status, headers };
      return res;
    },
    end(body: string) {
      sent.push({ ...head!, body });
    },
  };
  return { res: res as unknown as ServerResponse, sent };
}

function settle(bill: Bill, outcome: ForwardOutcome, costBilled = 0) {
  const { deps, asked } = fakeDeps({ costBilled });
  const { res, sent } = fakeResponse();
  const s: Metered = {
    ...plannedState(deps),
    res,
    held: fakeHeld(),
    limitHeaders: { 'x-request-id': 'req-1', 'x-ratelimit-limit-requests': '10' },
    bill,
    outcome,
  };
  expect(settleCall(s, deps)).to.equal(undefined);
  return { s, asked, sent };
}

describe('edge step settle: the bill handed to metering', () => {
  it('settles the tokens billed, writes the cost and marks the hold accounted for', () => {
    const { s, asked, sent } = settle(
      { kind: 'settle', usage: plainUsage(3, 4), format: 'chat', status: 499 },
      { kind: 'cut', tap: undefined, headersSent: true, by: 'client' },
      1234,
    );
    expect(asked.settled).to.deep.equal([{ call: s.held, usage: plainUsage(3, 4), format: 'chat', status: 499 }]);
    expect(asked.released).to.deep.equal([]);
    expect(s.costMicros).to.equal(1234);
    expect(s.accounted).to.equal(true);
    expect(sent).to.deep.equal([]);
  });

  it("releases the hold for the provider's own error and leaves the answer (already relayed) alone", () => {
    const { s, asked, sent } = settle({ kind: 'release', status: 529 }, { kind: 'upstream-error', status: 529 });
    expect(asked.released).to.deep.equal([{ call: s.held, status: 529 }]);
    expect(asked.settled).to.deep.equal([]);
    expect(s.accounted).to.equal(true);
    expect(sent).to.deep.equal([]);
  });

  it("answers a provider that could not be reached, in the client's format with the limit headers, after the hold went back", () => {
    const error = new AppError('upstream_unreachable', 'The model provider could not be reached.');
    const { asked, sent } = settle({ kind: 'release', status: 502 }, { kind: 'failed', error });
    expect(asked.released).to.have.length(1);
    expect(asked.warnings).to.deep.equal(['upstream failed']);
    expect(sent).to.have.length(1);
    expect(sent[0]!.status).to.equal(502);
    expect(sent[0]!.headers).to.include({ 'x-request-id': 'req-1', 'x-ratelimit-limit-requests': '10' });
    expect(JSON.parse(sent[0]!.body).error.message).to.equal(error.message);
  });

  it('answers a provider without usable credentials 503 without a warning per call: its token source logs the episode once', () => {
    const error = new AppError('unavailable', 'Provider "p" has no usable credentials: T is not set.');
    const { asked, sent } = settle({ kind: 'release', status: 503 }, { kind: 'failed', error });
    expect(asked.warnings).to.deep.equal([]);
    expect(sent[0]!.status).to.equal(503);
  });
});
