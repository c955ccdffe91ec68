import { Worker } from 'node:worker_threads';
import { AppError } from '../../shared/errors.js';
import type { WorkAnswer, WorkJob, WorkRequest } from './jobs.js';

/**
 * A small pool of worker threads for the CPU work a large request body
 * costs (JSON parse, checks, translation, serialization, local token
 * counts), so the proxy's event loop only moves bytes. Workers start on the
 * first job and do not keep the process alive. The queue is bounded (a full
 * one answers 503 with `retry-after`); a job running past its deadline has
 * its worker terminated (a new one starts for the next job) and answers 503.
 */

export interface BodyPoolOptions {
  threads: number;
  /** Jobs waiting for a worker beyond which a new one is refused. */
  queueMax: number;
  /** How long one job may run in its worker. */
  deadlineMs: number;
}

/** A job's answer, with its body's bytes handed back (the job's `raw` was moved to the worker, not copied). */
export interface Worked {
  result: unknown;
  raw: Buffer;
}

export interface BodyPool {
  /** Runs `job`; its `raw` is moved to the worker and is empty here until the answer hands it back. */
  run(job: WorkJob): Promise<Worked>;
  close(): Promise<void>;
}

/** The worker's file beside this one: .ts when run from source (tests, under tsx), .js once built. */
function workerUrl(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./worker.${ext}`, import.meta.url);
}

interface Pending {
  job: WorkJob;
  resolve(value: Worked): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  /** The job it runs, with its deadline timer. */
  busy: { id: number; pending: Pending; timer: NodeJS.Timeout } | undefined;
}

const busyError = () =>
  new AppError('unavailable', 'The proxy is busy with other large requests; retry shortly.', { headers: { 'retry-after': '1' } });
const lateError = () => new AppError('unavailable', 'The proxy could not process this request body in time; retry, or send a smaller body.');

export const bufferOf = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Bytes whose whole ArrayBuffer is theirs, so it can be moved to a worker: a body read whole already is; a slice is copied. */
function movable(raw: Uint8Array): Uint8Array {
  return raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw);
}

/** An AppError thrown in the worker, rebuilt here so it answers in the caller's format as if thrown on this thread. */
function rebuilt(answer: Extract<WorkAnswer, { error: unknown }>): Error {
  const e = answer.error;
  if (e.kind === undefined) return new Error(e.message);
  return new AppError(e.kind, e.message, { code: e.code, headers: e.headers });
}

export function createBodyPool(options: BodyPoolOptions): BodyPool {
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  let nextId = 0;
  let closed = false;

  const finish = (slot: Slot, settle: (p: Pending) => void) => {
    const busy = slot.busy;
    if (!busy) return;
    clearTimeout(busy.timer);
    slot.busy = undefined;
    settle(busy.pending);
    pump();
  };

  /** A worker that died or was stopped: its job fails, its place goes to a fresh worker on the next job. */
  const drop = (slot: Slot, err: Error) => {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    finish(slot, (p) => p.reject(err));
  };

  const start = (): Slot => {
    const slot: Slot = { worker: new Worker(workerUrl()), busy: undefined };
    slot.worker.on('message', (answer: WorkAnswer) => {
      if (slot.busy?.id !== answer.id) return;
      finish(slot, (p) => ('error' in answer ? p.reject(rebuilt(answer)) : p.resolve({ result: answer.result, raw: bufferOf(answer.raw) })));
    });
    slot.worker.on('error', (err: Error) => drop(slot, err));
    slot.worker.on('exit', () => drop(slot, new Error('a body worker exited')));
    // After the listeners: adding a 'message' listener refs the worker again.
    slot.worker.unref();
    slots.push(slot);
    return slot;
  };

  const dispatch = (slot: Slot, pending: Pending) => {
    const id = nextId++;
    const timer = setTimeout(() => {
      // Stuck on CPU: nothing else would stop it.
      drop(slot, lateError());
      void slot.worker.terminate();
    }, options.deadlineMs);
    timer.unref();
    slot.busy = { id, pending, timer };
    const request: WorkRequest = { id, job: pending.job };
    // Moved, not copied: copying a 10 MiB body held the loop for up to ~170 ms on a loaded machine.
    slot.worker.postMessage(request, [pending.job.raw.buffer as ArrayBuffer]);
  };

  function pump(): void {
    while (queue.length > 0 && !closed) {
      const slot = slots.find((s) => !s.busy) ?? (slots.length < options.threads ? start() : undefined);
      if (!slot) return;
      dispatch(slot, queue.shift()!);
    }
  }

  return {
    run(job) {
      job = { ...job, raw: movable(job.raw) };
      if (closed) return Promise.reject(new AppError('unavailable', 'The proxy is shutting down.'));
      if (queue.length >= options.queueMax) return Promise.reject(busyError());
      return new Promise((resolve, reject) => {
        queue.push({ job, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const p of queue.splice(0)) p.reject(new AppError('unavailable', 'The proxy is shutting down.'));
      await Promise.all(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}
