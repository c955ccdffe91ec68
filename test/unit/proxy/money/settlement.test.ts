import { expect } from 'chai';
import { createInFlight } from '../../../../proxy/money/settlement.js';

describe('money: the promises metering waits for (InFlight)', () => {
  it('counts a tracked promise until it settles, resolved or rejected', async () => {
    const inFlight = createInFlight();
    let resolve!: () => void;
    inFlight.track(new Promise<void>((r) => (resolve = r)));
    inFlight.track(Promise.reject(new Error('x')));
    expect(inFlight.size()).to.equal(2);
    await new Promise((r) => setImmediate(r));
    expect(inFlight.size()).to.equal(1);
    resolve();
    await inFlight.settled();
    expect(inFlight.size()).to.equal(0);
  });

  it('settled() waits for every promise tracked so far, and never rejects', async () => {
    const inFlight = createInFlight();
    const order: string[] = [];
    inFlight.track(new Promise<void>((r) => setTimeout(() => (order.push('slow'), r()), 20)));
    inFlight.track(Promise.reject(new Error('refused')));
    await inFlight.settled();
    order.push('settled');
    expect(order).to.deep.equal(['slow', 'settled']);
  });
});
