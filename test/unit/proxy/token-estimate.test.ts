import { expect } from 'chai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countWithinBudget, estimateFromLength } from '../../../proxy/token-estimate.js';
import { createTokenCounter } from '../../../proxy/token-counter.js';

describe('token counting within a budget', () => {
  const prose = 'It was the best of times, it was the worst of times;  "quoted"\nnew line\t tab 12345 — ünïcödé 漢字. '.repeat(200);

  it('counts exactly when cut into slices (cuts fall before a space that follows a non-space)', () => {
    expect(prose.length).to.be.above(10_000);
    expect(countWithinBudget([prose, 'tail'], countTokens, 60_000)).to.equal(countTokens(prose) + countTokens('tail'));
  });

  it('past its budget estimates the rest at the rate counted so far', () => {
    let clock = 0;
    // Each slice "takes" 10 ms: a 25 ms budget counts three slices, then estimates.
    const slow = (t: string) => ((clock += 10), countTokens(t));
    const n = countWithinBudget([prose], slow, 25, () => clock);
    const exact = countTokens(prose);
    expect(n).to.be.within(exact * 0.9, exact * 1.1);
    expect(clock).to.equal(30);
  });

  it('with nothing counted, estimates four characters a token', () => {
    expect(countWithinBudget(['x'.repeat(400)], countTokens, 0)).to.equal(100);
    expect(estimateFromLength(['ab', 'cdef', 'gh'])).to.equal(2);
  });

  it('counts in a worker thread, and answers from length when the worker is too slow', async () => {
    const counter = createTokenCounter({ budgetMs: 100, deadlineMs: 60_000 });
    try {
      expect(await counter.count(['hello world'])).to.equal(countTokens('hello world'));
    } finally {
      await counter.close();
    }
    const hurried = createTokenCounter({ budgetMs: 100, deadlineMs: 0 });
    try {
      expect(await hurried.count(['y'.repeat(40)])).to.equal(10);
    } finally {
      await hurried.close();
    }
  });
});
