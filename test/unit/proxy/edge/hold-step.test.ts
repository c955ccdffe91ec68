import { expect } from 'chai';
import { AppError } from '../../../../shared/errors.js';
import { outputCeiling } from '../../../../proxy/wire/index.js';
import { costMicros } from '../../../../proxy/money/cost.js';
import type { HoldOutcome } from '../../../../proxy/money/holds.js';
import { holdMoney } from '../../../../proxy/edge/steps/hold.js';
import { fakeDeps, plannedState, resolvedKey, type FakeAnswers } from './fakes.js';

function hold(answers: FakeAnswers = {}, key = resolvedKey()) {
  const { deps, asked } = fakeDeps(answers);
  const s = plannedState(deps, { key });
  s.inputEstimate = 40;
  s.limitHeaders = { 'x-request-id': 'req-1' };
  return { s, asked, run: () => holdMoney(s, deps) };
}

async function settled(out: unknown): Promise<unknown> {
  return Promise.resolve(out).then(
    (v) => v,
    (e: unknown) => e,
  );
}

describe("edge step hold: the call's worst-case cost reserved", () => {
  it('holds the worst-case cost on the key snapshot, writes the held call and tells metering it is owed', () => {
    const { s, asked, run } = hold({}, resolvedKey({ tpm: 25, key_remaining_micros: 500_000 }));
    expect(run()).to.equal(undefined);
    const amount = costMicros(s.model, 40, outputCeiling(s.call, s.model));
    expect(asked.holds).to.have.length(1);
    expect(asked.holds[0]).to.deep.include({ requestId: 'req-1', amount });
    expect(asked.holds[0]!.snapshot).to.deep.include({ workspaceId: 'w1', keyId: 'k1', balanceMicros: 10_000_000, keyRemainingMicros: 500_000 });
    expect(s.held).to.deep.include({
      requestId: 'req-1',
      keyId: 'k1',
      workspaceId: 'w1',
      holdMicros: amount,
      inputEstimate: 40,
      tokensTaken: 25,
      keyBudget: true,
      format: 'chat',
    });
    expect(asked.admitted).to.deep.equal([s.held]);
  });

  it('takes no tokens from a key without a TPM limit, and marks a key without a budget', () => {
    const { s, run } = hold();
    expect(run()).to.equal(undefined);
    expect(s.held).to.include({ tokensTaken: 0, keyBudget: false });
  });

  it('402 naming the balance or the budget, with the limit headers; nothing owed', () => {
    for (const reason of ['balance', 'budget'] as const) {
      const { s, asked, run } = hold({ hold: (): HoldOutcome => ({ ok: false, reason }) });
      const out = run() as AppError;
      expect(out.status).to.equal(402);
      expect(out.message).to.include(reason === 'balance' ? 'workspace balance' : 'budget');
      expect(out.headers).to.include({ 'x-request-id': 'req-1' });
      expect(s.detail).to.equal(reason);
      expect(s.held).to.equal(undefined);
      expect(asked.admitted).to.deep.equal([]);
    }
  });

  it('503 with retry-after 5 and no hold asked while usage cannot be recorded (outbox full)', () => {
    const { asked, run } = hold({ full: true });
    const out = run() as AppError;
    expect(out.status).to.equal(503);
    expect(out.headers).to.include({ 'retry-after': '5', 'x-request-id': 'req-1' });
    expect(asked.holds).to.deep.equal([]);
    expect(asked.errors).to.have.length(1);
  });

  it('503 (thrown: fails closed) when the hold store is down, whether it throws or rejects', async () => {
    const throwing = hold({
      hold: () => {
        throw new Error('ECONNREFUSED');
      },
    });
    expect(throwing.run).to.throw(AppError).with.property('status', 503);
    const rejecting = hold({ hold: () => Promise.reject(new Error('ECONNREFUSED')) });
    expect(await settled(rejecting.run()))
      .to.be.instanceOf(AppError)
      .with.property('status', 503);
    expect(rejecting.asked.admitted).to.deep.equal([]);
  });

  it('waits for a store that answers with a promise (Redis), with the same outcomes', async () => {
    const ok = hold({ hold: () => Promise.resolve<HoldOutcome>({ ok: true }) });
    expect(await settled(ok.run())).to.equal(undefined);
    expect(ok.asked.admitted).to.have.length(1);
    const refused = hold({ hold: () => Promise.resolve<HoldOutcome>({ ok: false, reason: 'budget' }) });
    expect(await settled(refused.run()))
      .to.be.instanceOf(AppError)
      .with.property('status', 402);
  });
});
