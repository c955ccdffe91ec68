import type { Logger } from '../../shared/logger.js';
import type { Outbox } from './outbox.js';

/** A probe write about a large batch's size: a disk that takes it takes the next batch. */
const PROBE_BYTES = 128 * 1024;

/** Whether the outbox's disk takes writes, as the last batch and the probes since found it. */
export interface OutboxDisk {
  /** The batcher's word on the last write. */
  stored: (ok: boolean) => void;
  /** A write was refused and no probe has succeeded since: admissions wait (503). */
  refused: () => boolean;
  stop: () => void;
}

/**
 * After a refused outbox write (a full disk), no call is admitted: its usage
 * could not be made durable, and a call served with its bill in memory alone
 * is lost with the process. Every `probeMs` a probe write tries the disk; the
 * first that succeeds (or a later batch's write) lets calls in again.
 */
export function watchOutboxDisk(outbox: Pick<Outbox, 'probe'>, logger: Logger, probeMs: number): OutboxDisk {
  let refused = false;
  let probing: NodeJS.Timeout | undefined;
  const stop = () => {
    clearInterval(probing);
    probing = undefined;
  };
  async function probe(): Promise<void> {
    try {
      await outbox.probe(PROBE_BYTES);
    } catch {
      return;
    }
    stop();
    if (refused) logger.warn('settlement outbox writable again: taking calls');
    refused = false;
  }
  return {
    stored(ok) {
      refused = !ok;
      if (ok) stop();
      else probing ??= setInterval(() => void probe(), probeMs).unref();
    },
    refused: () => refused,
    stop,
  };
}
