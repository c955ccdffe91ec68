import { expect } from 'chai';
import type { UsageKeyMoney, UsageReport } from '../../../../shared/contract/usage.js';
import { ControlPlaneUnavailable } from '../../../../proxy/control-plane-client.js';
import { createUsageReporter } from '../../../../proxy/money/reporter.js';
import { createInFlight, type Settlement } from '../../../../proxy/money/settlement.js';
import { useFakeClock } from '../../../support/fake-clock.js';
import { perKey, quietLogger, reportsOf, result, settlement } from './fakes.js';

type Answer = (reports: UsageReport[]) => Promise<UsageKeyMoney[]>;

const recordAll: Answer = (reports) =>
  Promise.resolve(
    perKey(
      reports,
      reports.map((r) => result(r)),
    ),
  );

/** A reporter over an injected control plane that answers with `answer` and records what it was sent. */
function reporter(answer: Answer = recordAll, retryMaxMs = 2_000) {
  const sent: string[][] = [];
  const recorded: string[] = [];
  const logger = quietLogger();
  let inFlight = 0;
  let most = 0;
  const r = createUsageReporter({
    cp: {
      async reportUsage(texts) {
        const reports = reportsOf(texts);
        sent.push(reports.map((x) => x.request_id));
        most = Math.max(most, ++inFlight);
        try {
          return await answer(reports);
        } finally {
          inFlight--;
        }
      },
    },
    logger,
    inFlight: createInFlight(),
    retryMaxMs,
    recorded: (batch) => {
      recorded.push(...batch.map((s) => s.requestId));
      return Promise.resolve();
    },
  });
  return { r, sent, recorded, logger, most: () => most };
}

const settlements = (from: number, n: number): Settlement[] => Array.from({ length: n }, (_, i) => settlement(from + i));

describe('money: the usage reporter (POST /internal/usage)', () => {
  const clock = useFakeClock();

  it('waits 100 ms from its oldest record for company, then reports everything queued in one call', async () => {
    const { r, sent, recorded } = reporter();
    r.queue(settlements(1, 1));
    await clock().advance(50);
    r.queue(settlements(2, 2));
    await clock().advance(49);
    expect(sent).to.deep.equal([]);
    await clock().advance(1);
    expect(sent).to.deep.equal([['req_1', 'req_2', 'req_3']]);
    expect(recorded).to.deep.equal(['req_1', 'req_2', 'req_3']);
    expect(r.unfinished()).to.equal(false);
  });

  it('reports at once when hurried (drain, shutdown), and at most 1,000 records per call, two calls in flight', async () => {
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const { r, sent, most } = reporter(async (reports) => {
      await gate;
      return recordAll(reports);
    });
    r.hurry(true);
    r.queue(settlements(0, 2_500));
    await clock().settle();
    expect(sent.map((b) => b.length)).to.deep.equal([1_000, 1_000]);
    release();
    await clock().settle();
    expect(sent.map((b) => b.length)).to.deep.equal([1_000, 1_000, 500]);
    expect(most()).to.equal(2);
  });

  it('retries a batch the control plane could not take, whole, backing off 200, 400, 800 ms… up to retryMaxMs', async () => {
    let down = 4;
    const { r, sent, recorded, logger } = reporter(
      (reports) => (down-- > 0 ? Promise.reject(new ControlPlaneUnavailable('down')) : recordAll(reports)),
      1_000,
    );
    r.hurry(true);
    r.queue(settlements(1, 2));
    await clock().settle();
    const times: number[] = [];
    for (let t = 0; t < 3_000 && !recorded.length; t++) {
      const before = sent.length;
      await clock().advance(1);
      if (sent.length > before) times.push(t + 1);
    }
    // Each wait counts from the failure before it.
    expect(times.map((t, i) => t - (times[i - 1] ?? 0))).to.deep.equal([200, 400, 800, 1_000]);
    expect(sent.every((b) => b.join() === 'req_1,req_2')).to.equal(true);
    expect(recorded).to.deep.equal(['req_1', 'req_2']);
    expect(logger.warnings).to.have.length(4);
  });

  it('wake() retries at once and starts the backoff over', async () => {
    let down = true;
    const { r, sent, recorded } = reporter((reports) => (down ? Promise.reject(new ControlPlaneUnavailable('down')) : recordAll(reports)), 60_000);
    r.hurry(true);
    r.queue(settlements(1, 1));
    await clock().settle();
    expect(sent).to.have.length(1);
    down = false;
    r.wake();
    await clock().settle();
    expect(sent).to.have.length(2);
    expect(recorded).to.deep.equal(['req_1']);
  });

  it('splits a refused batch (4xx) in halves until the bad record is alone; every other record is recorded, the bad one kept and retried apart', async () => {
    const refuses = (reports: UsageReport[]) =>
      reports.some((x) => x.request_id === 'req_3') ? Promise.reject(new Error('control plane answered 400')) : recordAll(reports);
    const { r, sent, recorded, logger } = reporter(refuses, 5_000);
    r.hurry(true);
    r.queue(settlements(0, 8));
    await clock().settle();
    expect(sent).to.deep.equal([
      ['req_0', 'req_1', 'req_2', 'req_3', 'req_4', 'req_5', 'req_6', 'req_7'],
      ['req_0', 'req_1', 'req_2', 'req_3'],
      ['req_4', 'req_5', 'req_6', 'req_7'],
      ['req_0', 'req_1'],
      ['req_2', 'req_3'],
      ['req_2'],
      ['req_3'],
    ]);
    expect(recorded.sort()).to.deep.equal(['req_0', 'req_1', 'req_2', 'req_4', 'req_5', 'req_6', 'req_7']);
    expect(logger.errors).to.deep.equal(['control plane refused a usage report; kept, and retried apart']);
    expect(r.queued()).to.equal(false);
    await clock().advance(4_999);
    expect(sent).to.have.length(7);
    await clock().advance(1);
    expect(sent.at(-1)).to.deep.equal(['req_3']);
  });

  it('stop() ends retries: nothing more is sent', async () => {
    const { r, sent } = reporter(() => Promise.reject(new ControlPlaneUnavailable('down')), 1_000);
    r.hurry(true);
    r.queue(settlements(1, 1));
    await clock().settle();
    r.stop();
    await clock().advance(2_000);
    expect(sent).to.have.length(1);
    expect(r.unfinished()).to.equal(true);
  });
});
