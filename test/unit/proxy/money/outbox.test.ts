import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOutbox, OutboxBusyError } from '../../../../proxy/money/outbox.js';
import { record } from './fakes.js';

const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));

describe('money: the outbox on disk (a temp dir)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tollgate-money-outbox-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts what is written and not acknowledged; a segment goes once all its records are acknowledged', async () => {
    const outbox = openOutbox(dir);
    const slot = await outbox.append([record(1), record(2), record(3)]);
    expect(outbox.pending()).to.equal(3);
    expect(segments(dir)).to.have.length(1);
    await outbox.ack(slot, 2);
    expect(outbox.pending()).to.equal(1);
    expect(segments(dir)).to.have.length(1);
    await outbox.ack(slot, 1);
    expect(outbox.pending()).to.equal(0);
    await outbox.close();
    expect(openOutbox(dir).replayed).to.deep.equal([]);
  });

  it('replays a request id written twice only once, oldest first', async () => {
    const first = openOutbox(dir);
    await first.append([record(1), record(2)]);
    await first.append([record(2), record(3)]);
    await first.close();
    const again = openOutbox(dir);
    expect(again.replayed.map((r) => r.record.report.request_id)).to.deep.equal(['req_1', 'req_2', 'req_3']);
    expect(again.pending()).to.equal(3);
    await again.close();
  });

  it('refuses a directory another live process holds, and takes over one whose holder is gone', () => {
    // The parent process (the test runner's shell or npm) is alive and is not this one.
    writeFileSync(join(dir, 'outbox.lock'), String(process.ppid));
    expect(() => openOutbox(dir)).to.throw(OutboxBusyError);
    writeFileSync(join(dir, 'outbox.lock'), '2147483646');
    expect(() => openOutbox(dir)).to.not.throw();
  });
});
