import { closeSync, constants, fdatasync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../../shared/process.js';
import { linesBuffer, type OutboxEntry, type OutboxRecord } from './record-json.js';

export type { OutboxEntry, OutboxRecord } from './record-json.js';

/** Where a written record sits, to be acknowledged later. */
export type OutboxSlot = { segment: number };

/** The proxy's durable list of usage not yet recorded by the control plane. */
export interface Outbox {
  /** Records left unacknowledged by an earlier run, oldest first. */
  readonly replayed: { record: OutboxRecord; slot: OutboxSlot }[];
  /** Records written and not yet acknowledged. */
  pending(): number;
  /** Writes a batch and makes it durable before resolving with the batch's slot; on failure nothing of it stays. */
  append(entries: readonly OutboxEntry[]): Promise<OutboxSlot>;
  /** Writes (durably) and deletes a file of this many bytes: whether the disk takes writes again after a failed append. */
  probe(bytes: number): Promise<void>;
  /** The control plane has recorded these: forget them (a segment goes once all its records have). */
  ack(slot: OutboxSlot, count: number): Promise<void>;
  close(): Promise<void>;
}

/** A segment this large is closed and a new one started, so acknowledged records can be deleted with their file. */
const SEGMENT_BYTES = 4 * 1024 * 1024;
const NAME = /^usage-(\d{12})\.jsonl$/;

/**
 * Segments are opened for synchronous data writes where the platform has
 * them (O_DSYNC): a write returns once its bytes are on disk, so a batch is
 * one call on the thread pool instead of a write and an fdatasync.
 */
const APPEND_DURABLE = constants.O_DSYNC === undefined ? undefined : constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC;

interface Segment {
  seq: number;
  path: string;
  /** Records written here and not yet acknowledged. */
  outstanding: number;
  bytes: number;
  handle?: FileHandle;
}

class OutboxWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboxWriteError';
  }
}

/** Writes all the bytes, durably, or throws: one write call may write less than asked (a disk filling up) and still succeed. */
async function writeDurably(handle: FileHandle, bytes: Buffer): Promise<void> {
  const { bytesWritten } = await handle.write(bytes);
  if (bytesWritten !== bytes.length) throw new OutboxWriteError(`short write: ${bytesWritten} of ${bytes.length} bytes (disk full?)`);
  if (APPEND_DURABLE === undefined) await handle.datasync();
}

/** A file of this many bytes written durably and deleted: whether the disk takes writes. */
async function probeWrite(path: string, bytes: number): Promise<void> {
  const handle = await open(path, APPEND_DURABLE ?? 'w');
  try {
    await writeDurably(handle, Buffer.alloc(bytes));
  } finally {
    await handle.close();
    await unlink(path).catch(() => undefined);
  }
}

export class OutboxBusyError extends Error {
  constructor(dir: string, pid: number) {
    super(`The settlement outbox in ${dir} is in use by process ${pid}; give each proxy its own PROXY_DATA_DIR.`);
    this.name = 'OutboxBusyError';
  }
}

/**
 * The settlement outbox: usage records on local disk from the moment their
 * batch is gathered until the control plane has acknowledged them.
 *
 * Files are append-only segments of JSON lines. A batch is one durable
 * write (O_DSYNC, or a write and an fdatasync), so the cost is per batch,
 * never per call. Acknowledgements are not written: a segment is deleted
 * once every record in it is acknowledged, and a record replayed after a
 * crash that had in fact been recorded is harmless, since the ledger is
 * idempotent on the request id. A torn last line (a crash mid-write) is
 * skipped: its write had not returned, so nothing had been promised about it.
 */
export function openOutbox(dir: string): Outbox {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'outbox.lock');
  try {
    const holder = Number(readFileSync(lock, 'utf8'));
    if (holder !== process.pid && isAlive(holder)) throw new OutboxBusyError(dir, holder);
  } catch (err) {
    if (err instanceof OutboxBusyError) throw err;
  }
  writeFileSync(lock, String(process.pid));

  const segments = new Map<number, Segment>();
  const replayed: { record: OutboxRecord; slot: OutboxSlot }[] = [];
  const seen = new Set<string>();
  for (const name of readdirSync(dir).sort()) {
    const m = NAME.exec(name);
    if (!m) continue;
    const seq = Number(m[1]);
    const path = join(dir, name);
    const text = readFileSync(path, 'utf8');
    const seg: Segment = { seq, path, outstanding: 0, bytes: SEGMENT_BYTES };
    for (const line of text.split('\n')) {
      if (!line) continue;
      let record: OutboxRecord;
      try {
        record = JSON.parse(line) as OutboxRecord;
      } catch {
        continue;
      }
      if (seen.has(record.report.request_id)) continue;
      seen.add(record.report.request_id);
      seg.outstanding++;
      replayed.push({ record, slot: { segment: seq } });
    }
    if (seg.outstanding) segments.set(seq, seg);
    else rmSync(path, { force: true });
  }
  let nextSeq = Math.max(0, ...segments.keys()) + 1;
  let current: Segment | undefined;
  let pending = replayed.length;

  // File operations run one at a time, so an emptying never overtakes a write.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn);
    chain = p.catch(() => undefined);
    return p;
  };

  const segmentPath = (seq: number) => join(dir, `usage-${String(seq).padStart(12, '0')}.jsonl`);

  async function retire(seg: Segment): Promise<void> {
    segments.delete(seg.seq);
    if (current === seg) current = undefined;
    await seg.handle?.close();
    await unlink(seg.path).catch(() => undefined);
  }

  /**
   * A write failed, perhaps after part of the batch reached the file: a torn
   * line there would swallow the next batch's first record on replay (both
   * unparsable as one line). The segment goes back to its last whole line and
   * takes no more writes; one with nothing outstanding is deleted (freeing
   * its space). If even the truncation fails, the torn line is the file's
   * last and replay skips it alone.
   */
  async function abandon(seg: Segment): Promise<void> {
    await seg.handle!.truncate(seg.bytes).catch(() => undefined);
    if (current === seg) current = undefined;
    if (seg.outstanding <= 0) await retire(seg);
  }

  return {
    /** Records left unacknowledged by an earlier run, oldest first. */
    replayed,
    /** Records written and not yet acknowledged. */
    pending: () => pending,
    /** Writes a batch and makes it durable before resolving with the batch's slot. */
    append: (entries: readonly OutboxEntry[]): Promise<OutboxSlot> =>
      serial(async () => {
        if (!current || current.bytes >= SEGMENT_BYTES) {
          const seq = nextSeq++;
          const path = segmentPath(seq);
          current = { seq, path, outstanding: 0, bytes: 0, handle: await open(path, APPEND_DURABLE ?? 'a') };
          segments.set(seq, current);
          // The new file's name must survive a machine crash too.
          const d = openSync(dir, 'r');
          try {
            await new Promise<void>((resolve, reject) => fdatasync(d, (err) => (err ? reject(err) : resolve())));
          } finally {
            closeSync(d);
          }
        }
        const seg = current;
        const bytes = linesBuffer(entries);
        try {
          await writeDurably(seg.handle!, bytes);
        } catch (err) {
          await abandon(seg);
          throw err;
        }
        seg.bytes += bytes.length;
        seg.outstanding += entries.length;
        pending += entries.length;
        return { segment: seg.seq };
      }),
    probe: (bytes: number): Promise<void> => serial(() => probeWrite(join(dir, 'probe.tmp'), bytes)),
    /** The control plane has recorded these: forget them (a segment goes once all its records have). */
    async ack(slot: OutboxSlot, count: number): Promise<void> {
      const seg = segments.get(slot.segment);
      if (!seg) return;
      seg.outstanding -= count;
      pending -= count;
      if (seg.outstanding > 0) return;
      await serial(async () => {
        if (seg.outstanding > 0 || !segments.has(seg.seq)) return;
        // The file being written is emptied rather than replaced: no new name to make durable.
        // (If the truncation is lost in a crash, its records are replayed, and recorded no twice.)
        if (seg === current && seg.bytes < SEGMENT_BYTES) {
          seg.bytes = 0;
          await seg.handle!.truncate(0);
        } else await retire(seg);
      });
    },
    close: () =>
      serial(async () => {
        for (const seg of [...segments.values()]) {
          if (seg.outstanding <= 0) await retire(seg);
          else await seg.handle?.close();
        }
        current = undefined;
        rmSync(lock, { force: true });
      }),
  };
}
