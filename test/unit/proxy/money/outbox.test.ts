import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOutbox, OutboxBusyError } from '../../../../proxy/money/outbox.js';
import { entryOf } from '../../../../proxy/money/record-json.js';
import { record } from './fakes.js';
import { skipped } from '../../../support/skips.js';

const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));

describe('money: the outbox on disk (a temp dir)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tollgate-money-outbox-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts what is written and not acknowledged; a segment goes once all its records are acknowledged', async () => {
    const outbox = openOutbox(dir);
    const slot = await outbox.append([record(1), record(2), record(3)].map(entryOf));
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
    await first.append([record(1), record(2)].map(entryOf));
    await first.append([record(2), record(3)].map(entryOf));
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

describe('money: the outbox on a disk that fills up (a 256 KiB tmpfs, root only)', () => {
  let dir: string;
  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-money-outbox-full-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir], { encoding: 'utf8' });
    if (mounted.status === 0) return;
    rmSync(dir, { recursive: true, force: true });
    if (process.env.CI) throw new Error(`mounting a tmpfs needs root in CI: ${mounted.stderr}`);
    skipped('the outbox on a full disk', 'mounting a tmpfs needs root');
    this.skip();
  });
  after(() => {
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a batch the disk cut short leaves nothing of itself: the records before and after it are all replayed', async () => {
    const outbox = openOutbox(dir);
    await outbox.append([record(1), record(2)].map(entryOf));
    // Every free page taken: only the rest of the segment's last page takes bytes, so a large batch is written in part.
    const filler = await open(join(dir, 'filler'), 'w');
    try {
      for (;;) await filler.write(Buffer.alloc(16 * 1024));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).to.equal('ENOSPC');
    } finally {
      await filler.close();
    }
    const big = Array.from({ length: 60 }, (_, i) => record(100 + i));
    let refused: unknown;
    await outbox.append(big.map(entryOf)).catch((err: unknown) => (refused = err));
    expect(refused, 'the write was refused').to.be.instanceOf(Error);
    await outbox.probe(4096).then(
      () => expect.fail('the probe must fail on a full disk'),
      () => undefined,
    );
    await unlink(join(dir, 'filler'));
    await outbox.probe(4096);
    await outbox.append([record(3)].map(entryOf));
    expect(outbox.pending()).to.equal(3);
    await outbox.close();
    const again = openOutbox(dir);
    expect(again.replayed.map((r) => r.record.report.request_id)).to.deep.equal(['req_1', 'req_2', 'req_3']);
    await again.close();
  });
});
