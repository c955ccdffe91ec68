import { expect } from 'chai';
import type { AppError } from '../../../../shared/errors.js';
import { estimateInputTokens } from '../../../../proxy/money/cost.js';
import { takeLimits } from '../../../../proxy/edge/steps/limits.js';
import type { LimitOutcome } from '../../../../proxy/rate-limits.js';
import { fakeDeps, resolvedKey, stateAfter } from './fakes.js';

const WINDOW = { limit: 10, remaining: 0, resetMs: 30_000 };

function take(limit: LimitOutcome | Promise<LimitOutcome>) {
  const { deps, asked } = fakeDeps({ limit });
  const s = stateAfter(deps, { key: resolvedKey({ rpm: 10, tpm: 1000 }) });
  return { s, asked, out: takeLimits(s, deps) };
}

/** The in-process answer (no promise). */
function now(out: ReturnType<typeof takeLimits>): AppError | undefined {
  expect(out).to.not.be.instanceOf(Promise);
  return out as AppError | undefined;
}

describe("edge step limits: the key's requests and tokens per minute", () => {
  it('takes one request and the estimated input tokens from the key, and answers at once in process', () => {
    const { s, asked, out } = take({ ok: true, requests: { limit: 10, remaining: 9, resetMs: 60_000 } });
    expect(out).to.equal(undefined);
    expect(s.inputEstimate).to.equal(estimateInputTokens(s.call.raw.length));
    expect(asked.limits).to.deep.equal([{ keyId: 'k1', rpm: 10, tpm: 1000, tokens: s.inputEstimate }]);
    expect(s.limitHeaders).to.include({ 'x-request-id': 'req-1', 'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '9' });
  });

  it('429 naming the window, with retry-after in whole seconds (at least 1) and the limit headers', () => {
    const taken = take({ ok: false, which: 'tokens', retryAfterMs: 1_200, tokens: WINDOW });
    const out = now(taken.out);
    const s = taken.s;
    expect(out?.status).to.equal(429);
    expect(out?.message).to.include('tokens');
    expect(out?.headers).to.include({ 'retry-after': '2', 'x-request-id': 'req-1' });
    expect(s.detail).to.equal('tokens');
    expect(now(take({ ok: false, which: 'requests', retryAfterMs: 10, requests: WINDOW }).out)?.headers).to.include({ 'retry-after': '1' });
  });

  it('waits for limits that answer with a promise (Redis), with the same outcomes', async () => {
    const { s, out } = take(Promise.resolve<LimitOutcome>({ ok: false, which: 'requests', retryAfterMs: 5_000, requests: WINDOW }));
    expect(out).to.be.instanceOf(Promise);
    expect((await out)?.status).to.equal(429);
    expect(s.detail).to.equal('requests');
  });
});
