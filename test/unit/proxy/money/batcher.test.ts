import { expect } from 'chai';
import { createSettlementBatcher } from '../../../../proxy/money/batcher.js';
import type { OutboxEntry, OutboxSlot } from '../../../../proxy/money/outbox.js';
import { createInFlight, type Settlement } from '../../../../proxy/money/settlement.js';
import { useFakeClock } from '../../../support/fake-clock.js';
import { quietLogger, settlement } from './fakes.js';

function batcher(append: (entries: readonly OutboxEntry[]) => Promise<OutboxSlot> = () => Promise.resolve({ segment: 7 })) {
  /** What each write carried: its reports' text. */
  const appended: string[][] = [];
  const written: Settlement[][] = [];
  const stored: boolean[] = [];
  const logger = quietLogger();
  const b = createSettlementBatcher({
    outbox: {
      append(entries) {
        appended.push(entries.map((e) => e.json));
        return append(entries);
      },
    },
    logger,
    inFlight: createInFlight(),
    written: (batch) => void written.push(batch),
    stored: (ok) => void stored.push(ok),
  });
  return { b, appended, written, stored, logger };
}

describe('money: the settlement batcher (gather → one outbox write per batch)', () => {
  const clock = useFakeClock();

  it('gathers for 15 ms after the first record, then writes the batch once and hands it on with its slot', async () => {
    const { b, appended, written } = batcher();
    b.add(settlement(1));
    await clock().advance(5);
    b.add(settlement(2));
    await clock().advance(9);
    expect(appended).to.deep.equal([]);
    expect(b.busy()).to.equal(true);
    await clock().advance(1);
    expect(appended).to.deep.equal([[settlement(1).json, settlement(2).json]]);
    expect(written).to.have.length(1);
    expect(written[0]!.map((s) => s.slot)).to.deep.equal([{ segment: 7 }, { segment: 7 }]);
    expect(b.busy()).to.equal(false);
  });

  it('writes at once (next turn, no 15 ms wait) when 200 records have gathered', async () => {
    const { b, appended } = batcher();
    for (let i = 0; i < 200; i++) b.add(settlement(i));
    await clock().settle();
    expect(appended).to.have.length(1);
    expect(appended[0]).to.have.length(200);
  });

  it('a batch whose write failed is still handed on (sent undurable, not held back), and the failure logged', async () => {
    const { b, written, stored, logger } = batcher(() => Promise.reject(new Error('ENOSPC')));
    b.add(settlement(1));
    b.flush();
    await clock().settle();
    expect(written).to.have.length(1);
    expect(stored, 'the refusal is told, so admissions stop').to.deep.equal([false]);
    expect(written[0]![0]!.slot).to.equal(undefined);
    expect(logger.errors).to.deep.equal(['settlement outbox write failed']);
  });

  it('nudge writes what has gathered only when no write is scheduled; flush writes now', async () => {
    const { b, appended } = batcher();
    b.nudge();
    expect(appended).to.deep.equal([]);
    b.add(settlement(1));
    b.nudge(); // a gather timer is running: left to it
    expect(appended).to.deep.equal([]);
    b.flush();
    expect(appended).to.have.length(1);
    await clock().advance(20);
    expect(appended).to.have.length(1);
  });
});
