import { createConnection, createServer, type Server } from 'node:net';

/**
 * Counts the commands a client sends in RESP (arrays of bulk strings, as
 * ioredis writes them), fed the bytes as they arrive in any cut.
 */
export class RespCounter {
  readonly byCommand: Record<string, number> = {};
  commands = 0;
  private buf: Buffer = Buffer.alloc(0);

  feed(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      const used = this.one();
      if (used === 0) return;
      this.buf = this.buf.subarray(used);
    }
  }

  /** Consumes one whole command from the buffer; returns the bytes it took, 0 when it is not all there yet. */
  private one(): number {
    const b = this.buf;
    if (b.length === 0) return 0;
    const line = (at: number) => {
      const end = b.indexOf('\r\n', at);
      return end === -1 ? undefined : { text: b.toString('latin1', at, end), next: end + 2 };
    };
    const head = line(0);
    if (!head) return 0;
    if (head.text[0] !== '*') {
      // An inline command (redis-cli style): one line, its first word the name.
      this.count(head.text.split(' ')[0] ?? '');
      return head.next;
    }
    const parts = Number(head.text.slice(1));
    let at = head.next;
    let name = '';
    for (let i = 0; i < parts; i++) {
      const len = line(at);
      if (!len) return 0;
      const size = Number(len.text.slice(1));
      if (b.length < len.next + size + 2) return 0;
      if (i === 0) name = b.toString('latin1', len.next, len.next + size);
      at = len.next + size + 2;
    }
    this.count(name);
    return at;
  }

  private count(name: string): void {
    const key = name.toUpperCase();
    this.commands++;
    this.byCommand[key] = (this.byCommand[key] ?? 0) + 1;
  }
}

export interface RedisCounter {
  url: string;
  /** Commands and round trips (a client's write after the server's last answer) since the last reset. */
  read(): { commands: number; roundTrips: number; byCommand: Record<string, number> };
  reset(): void;
  close(): Promise<void>;
}

/** A TCP pass-through to `target` (redis://host:port) that counts what every client sends through it. */
export async function startRedisCounter(target: string): Promise<RedisCounter> {
  const to = new URL(target);
  let counter = new RespCounter();
  let roundTrips = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: to.hostname, port: Number(to.port || 6379) });
    let waiting = false;
    client.on('data', (c: Buffer) => {
      if (!waiting) roundTrips++;
      waiting = true;
      counter.feed(c);
      upstream.write(c);
    });
    upstream.on('data', (c: Buffer) => {
      waiting = false;
      client.write(c);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const auth = to.username || to.password ? `${to.username}:${to.password}@` : '';
  return {
    url: `redis://${auth}127.0.0.1:${port}${to.pathname}`,
    read: () => ({ commands: counter.commands, roundTrips, byCommand: { ...counter.byCommand } }),
    reset() {
      counter = new RespCounter();
      roundTrips = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.unref();
      }),
  };
}
