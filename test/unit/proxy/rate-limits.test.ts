import { expect } from 'chai';
import { createRateLimits, createWindowCounter, type LimitOutcome } from '../../../proxy/rate-limits.js';

describe('proxy: in-process rate limits', () => {
  it('decide at once, without a promise, and say what is left of each window', () => {
    const limits = createRateLimits(undefined, 'test');
    const first = limits.admit('k1', 2, 100, 30);
    expect(first).not.to.be.instanceOf(Promise);
    expect(first).to.deep.include({ ok: true });
    expect((first as LimitOutcome).requests).to.include({ limit: 2, remaining: 1 });
    expect((first as LimitOutcome).tokens).to.include({ limit: 100, remaining: 70 });
    expect((first as LimitOutcome).requests!.resetMs).to.be.within(59_000, 60_000);
  });

  it('refuse the request over the rpm with the time left, and count requests per key', () => {
    const limits = createRateLimits(undefined, 'test');
    for (let i = 0; i < 3; i++) expect((limits.admit('k1', 3, null, 1) as LimitOutcome).ok).to.equal(true);
    const refused = limits.admit('k1', 3, null, 1) as LimitOutcome & { ok: false };
    expect(refused).to.include({ ok: false, which: 'requests' });
    expect(refused.retryAfterMs).to.be.within(59_000, 60_000);
    expect(refused.requests).to.include({ remaining: 0 });
    expect((limits.admit('k2', 3, null, 1) as LimitOutcome).ok, 'another key has its own window').to.equal(true);
  });

  it('refuse tokens over the tpm, and take back what settlement gives back', async () => {
    const limits = createRateLimits(undefined, 'test');
    expect((limits.admit('k1', null, 100, 80) as LimitOutcome).ok).to.equal(true);
    expect(limits.admit('k1', null, 100, 30)).to.include({ ok: false, which: 'tokens' });
    // The refused take counted (as rate-limiter-flexible counts it): 110 used; giving back 60 leaves 50.
    await limits.adjustTokens('k1', 100, -60);
    const after = limits.admit('k1', null, 100, 50) as LimitOutcome;
    expect(after.ok).to.equal(true);
    expect(after.tokens).to.include({ remaining: 0 });
  });

  it('a window starts at the first take and lasts a minute; lapsed windows are swept', () => {
    let now = 1_000;
    const counter = createWindowCounter(() => now);
    expect(counter.add('a', 5)).to.deep.equal({ used: 5, msBeforeNext: 60_000 });
    now += 59_999;
    expect(counter.add('a', 1)).to.deep.equal({ used: 6, msBeforeNext: 1 });
    now += 1;
    expect(counter.add('a', 1)).to.deep.equal({ used: 1, msBeforeNext: 60_000 });
  });
});
