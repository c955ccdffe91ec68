import type { ServerResponse } from 'node:http';

/**
 * Writes one response at the pace of a real provider: one write per event,
 * waiting for 'drain' when the socket pushes back, and stopping the moment
 * the client goes away.
 */
export class Responder {
  open = true;
  /** We cut the connection ourselves (the `reset` behaviour), so it is not a client abort. */
  hungUp = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly res: ServerResponse) {
    res.once('close', this.onClose);
  }

  private readonly onClose = (): void => {
    this.open = false;
    this.release();
  };

  private readonly release = (): void => {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.res.off('drain', this.release);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  };

  /** Resolves after `ms`, or at once if the client leaves meanwhile. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.open) return resolve();
      this.wake = resolve;
      this.timer = setTimeout(this.release, ms);
    });
  }

  /** Writes one chunk; returns a promise only when the caller must wait for 'drain'. */
  write(chunk: string): Promise<void> | undefined {
    if (this.res.write(chunk)) return undefined;
    return new Promise((resolve) => {
      if (!this.open) return resolve();
      this.wake = resolve;
      this.res.on('drain', this.release);
    });
  }

  /** Writes frames[from..to) one at a time, `delayMs` apart; false if the client left. */
  async writeFrames(frames: readonly string[], from: number, to: number, delayMs: number): Promise<boolean> {
    for (let i = from; i < to; i++) {
      if (delayMs > 0 && i > 0) await this.pause(delayMs);
      if (!this.open) return false;
      const drained = this.write(frames[i]!);
      if (drained !== undefined) await drained;
    }
    return this.open;
  }

  /** Drops the connection after flushing what was written, like a provider dying mid-answer. */
  hangUp(): void {
    this.hungUp = true;
    const socket = this.res.socket;
    if (socket === null) return;
    // end() uncorks and flushes what the response wrote before the FIN, so the
    // client reliably sees the partial answer; destroy() alone could drop it.
    socket.end();
    socket.once('finish', () => socket.destroy());
  }
}
