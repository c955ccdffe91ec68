import { mock } from 'node:test';

/**
 * A clock the test moves: `setTimeout` (and `Date`) from node:test's mock
 * timers, and `performance.now()`, which the money modules read for their
 * windows, kept in step with it. Promises still run for real: `advance`
 * lets them settle between timers.
 */
interface FakeClock {
  /** Moves time on by `ms`, firing the timers due on the way, and lets the promises they start settle. */
  advance(ms: number): Promise<void>;
  /** Lets pending promises (not timers) settle. */
  settle(): Promise<void>;
  restore(): void;
}

const realImmediate = setImmediate;

/** A few turns of the event loop, so promise chains several links long finish. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => realImmediate(r));
}

function fakeClock(): FakeClock {
  let now = 1_000;
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  const perf = mock.method(performance, 'now', () => now);
  return {
    async advance(ms) {
      // A step at a time, so a timer set by a timer that fired on the way is due at the right moment.
      for (let left = ms; left > 0; left--) {
        now++;
        mock.timers.tick(1);
        await turns(2);
      }
      await turns();
    },
    settle: () => turns(),
    restore() {
      mock.timers.reset();
      perf.mock.restore();
    },
  };
}

/** A fresh fake clock for each test of the enclosing describe (mocha hooks), restored after it. */
export function useFakeClock(): () => FakeClock {
  let clock: FakeClock | undefined;
  beforeEach(() => (clock = fakeClock()));
  afterEach(() => clock?.restore());
  return () => clock!;
}
