import type { Server } from 'node:http';
import type { AbandonedReads } from '../abandoned.js';
import type { EdgeHandler } from '../edge/index.js';

/**
 * Stops the server in order: no new connections (idle keep-alive ones go
 * now, and each one whose call finishes while we wait goes too), calls in
 * flight get until `graceMs` (answers read on after their client left,
 * abandoned.ts, too), then what remains is cut — each cut call
 * queues its settlement (billed for what it used) before `edge.idle()`
 * resolves. The caller then hands the settlements on and releases the rest.
 */
export async function stopServing(
  server: Server,
  edge: EdgeHandler,
  graceMs: number,
  abandoned: AbandonedReads,
  /** Cuts the connections the server's HTTP/1.1 side does not track (upgraded WebSockets, HTTP/2 sessions) at the deadline. */
  cutUntracked: () => void = () => {},
): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  await Promise.race([edge.idle(), deadline]);
  clearTimeout(timer);
  // Answers read on after their client left end now too, and the connections cut next are not read on.
  abandoned.stop();
  server.closeAllConnections();
  cutUntracked();
  await edge.idle();
  await closed;
  clearInterval(sweep);
}
