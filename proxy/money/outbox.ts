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

/** One outbox's state, handed to the helpers below. */
interface OutboxState {
  dir: string;
  lock: string;
  segments: Map<number, Segment>;
  /** The segment being written, if any. */
  current: Segment | undefined;
  nextSeq: number;
  pending: number;
  /** File operations run one at a time, so an emptying never overtakes a write. */
  chain: Promise<unknown>;
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
  const lock = takeLock(dir);
  const { segments, replayed } = readSegments(dir);
  const state: OutboxState = {
    dir,
    lock,
    segments,
    current: undefined,
    nextSeq: Math.max(0, ...segments.keys()) + 1,
    pending: replayed.length,
    chain: Promise.resolve(),
  };
  return {
    replayed,
    pending: () => state.pending,
    append: (entries) => serial(state, () => appendBatch(state, entries)),
    probe: (bytes) => serial(state, () => probeWrite(join(dir, 'probe.tmp'), bytes)),
    ack: (slot, count) => ackSlot(state, slot, count),
    close: () => serial(state, () => closeSegments(state)),
  };
}

/** The directory's lock file, written with this process's id; refused while another live process holds it. */
function takeLock(dir: string): string {
  const lock = join(dir, 'outbox.lock');
  try {
    const holder = Number(readFileSync(lock, 'utf8'));
    if (holder !== process.pid && isAlive(holder)) throw new OutboxBusyError(dir, holder);
  } catch (err) {
    if (err instanceof OutboxBusyError) throw err;
  }
  writeFileSync(lock, String(process.pid));
  return lock;
}

/** The segments an earlier run left and their records, each request once; a segment with none is deleted. */
function readSegments(dir: string): { segments: Map<number, Segment>; replayed: Outbox['replayed'] } {
  const segments = new Map<number, Segment>();
  const replayed: { record: OutboxRecord; slot: OutboxSlot }[] = [];
  const seen = new Set<string>();
  for (const name of readdirSync(dir).sort()) {
    const m = NAME.exec(name);
    if (!m) continue;
    const seq = Number(m[1]);
    const path = join(dir, name);
    const seg: Segment = { seq, path, outstanding: 0, bytes: SEGMENT_BYTES };
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const record = parseLine(line);
      if (!record || seen.has(record.report.request_id)) continue;
      seen.add(record.report.request_id);
      seg.outstanding++;
      replayed.push({ record, slot: { segment: seq } });
    }
    if (seg.outstanding) segments.set(seq, seg);
    else rmSync(path, { force: true });
  }
  return { segments, replayed };
}

/** A record, or undefined for an empty or torn line. */
function parseLine(line: string): OutboxRecord | undefined {
  if (!line) return undefined;
  try {
    return JSON.parse(line) as OutboxRecord;
  } catch {
    return undefined;
  }
}

function serial<T>(state: OutboxState, fn: () => Promise<T>): Promise<T> {
  const p = state.chain.then(fn);
  state.chain = p.catch(() => undefined);
  return p;
}

async function appendBatch(state: OutboxState, entries: readonly OutboxEntry[]): Promise<OutboxSlot> {
  if (!state.current || state.current.bytes >= SEGMENT_BYTES) await newSegment(state);
  const seg = state.current!;
  const bytes = linesBuffer(entries);
  try {
    await writeDurably(seg.handle!, bytes);
  } catch (err) {
    await abandon(state, seg);
    throw err;
  }
  seg.bytes += bytes.length;
  seg.outstanding += entries.length;
  state.pending += entries.length;
  return { segment: seg.seq };
}

/** Starts the next segment as the current one. */
async function newSegment(state: OutboxState): Promise<void> {
  const seq = state.nextSeq++;
  const path = join(state.dir, `usage-${String(seq).padStart(12, '0')}.jsonl`);
  const seg: Segment = { seq, path, outstanding: 0, bytes: 0, handle: await open(path, APPEND_DURABLE ?? 'a') };
  state.segments.set(seq, seg);
  state.current = seg;
  // The new file's name must survive a machine crash too.
  const d = openSync(state.dir, 'r');
  try {
    await new Promise<void>((resolve, reject) => fdatasync(d, (err) => (err ? reject(err) : resolve())));
  } finally {
    closeSync(d);
  }
}

async function ackSlot(state: OutboxState, slot: OutboxSlot, count: number): Promise<void> {
  const seg = state.segments.get(slot.segment);
  if (!seg) return;
  seg.outstanding -= count;
  state.pending -= count;
  if (seg.outstanding > 0) return;
  await serial(state, async () => {
    if (seg.outstanding > 0 || !state.segments.has(seg.seq)) return;
    // The file being written is emptied rather than replaced: no new name to make durable.
    // (If the truncation is lost in a crash, its records are replayed, and recorded no twice.)
    if (seg === state.current && seg.bytes < SEGMENT_BYTES) {
      seg.bytes = 0;
      await seg.handle!.truncate(0);
    } else await retire(state, seg);
  });
}

async function closeSegments(state: OutboxState): Promise<void> {
  for (const seg of [...state.segments.values()]) {
    if (seg.outstanding <= 0) await retire(state, seg);
    else await seg.handle?.close();
  }
  state.current = undefined;
  rmSync(state.lock, { force: true });
}

async function retire(state: OutboxState, seg: Segment): Promise<void> {
  state.segments.delete(seg.seq);
  if (state.current === seg) state.current = undefined;
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
async function abandon(state: OutboxState, seg: Segment): Promise<void> {
  await seg.handle!.truncate(seg.bytes).catch(() => undefined);
  if (state.current === seg) state.current = undefined;
  if (seg.outstanding <= 0) await retire(state, seg);
}
