import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The nice level `npm start`'s control plane runs at. Where the proxy and
 * the control plane share a core, a settlement batch that wakes while the
 * proxy has calls to answer waits for the proxy rather than sit in front of
 * them; with a core to spare it changes nothing. At 10 the control plane
 * still gets about a tenth of a core the proxy keeps busy (the scheduler's
 * weights for nice 10 and 0 are 110 and 1024) and all of an idle one; usage
 * reports wait meanwhile in the proxy's durable outbox and arrive in larger
 * batches, which cost the control plane less per call (docs/operations.md).
 */
export const CONTROL_PLANE_NICE = 10;

/**
 * Lowers this process's scheduling priority to `nice`. On Linux a nice
 * level belongs to a thread, and V8's and libuv's threads already run by the
 * time this is called, so each thread in /proc/self/task is lowered (threads
 * started later inherit it). Elsewhere only the calling thread is. Raising
 * priority needs privileges, lowering does not; a failure leaves the
 * process as it was, which only costs the proxy some tail latency.
 */
export function lowerPriority(nice: number): void {
  let threads: number[];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    threads = [0];
  }
  for (const tid of threads) {
    try {
      setPriority(tid, nice);
    } catch {
      /* a thread that ended meanwhile, or a platform without per-thread priorities */
    }
  }
}
