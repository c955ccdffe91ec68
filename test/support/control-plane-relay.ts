import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP relay between a proxy and its control plane that a test steers,
 * so an ordering that load produces by chance is produced on purpose: a
 * request whose path starts with a held prefix waits until released; one
 * with a failing prefix is answered 503 (the proxy's "unreachable"); `down`
 * cuts every connection and refuses new ones, as a SIGKILLed control plane.
 * Every answer's bytes can be waited for (`passed`), e.g. the change
 * stream's `ready` frame.
 */
export async function startControlPlaneRelay(target: string) {
  const held = new Set<string>();
  const failing = new Set<string>();
  const waiting: { path: string; go: () => void }[] = [];
  const sockets = new Set<Socket>();
  const watchers: { pattern: string; resolve: () => void }[] = [];
  let down = false;
  let inFlight = 0;
  let lastActivity = Date.now();

  const matches = (set: Set<string>, path: string) => [...set].some((prefix) => path.startsWith(prefix));
  const observe = (text: string) => {
    lastActivity = Date.now();
    for (const w of [...watchers]) {
      if (!text.includes(w.pattern)) continue;
      watchers.splice(watchers.indexOf(w), 1);
      w.resolve();
    }
  };

  function forward(req: IncomingMessage, res: ServerResponse): void {
    inFlight++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight--;
      lastActivity = Date.now();
    };
    res.once('close', finish);
    const up = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        observe(chunk.toString());
        res.write(chunk);
      });
      answer.once('end', () => {
        res.end();
        finish();
      });
      answer.once('error', () => res.destroy());
    });
    up.once('error', () => res.destroy());
    req.pipe(up);
  }

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    lastActivity = Date.now();
    if (down) return void req.socket.destroy();
    if (matches(failing, path)) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"relay says no"}');
    if (matches(held, path)) {
      waiting.push({ path, go: () => forward(req, res) });
      return;
    }
    forward(req, res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Requests under this path prefix wait until `release`. */
    hold: (prefix: string) => void held.add(prefix),
    /** Stops holding the prefix and sends on what waited under it. */
    release(prefix: string): void {
      held.delete(prefix);
      for (const w of waiting.filter((x) => x.path.startsWith(prefix))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.go();
      }
    },
    /** How many requests wait under the prefix. */
    waitingOn: (prefix: string) => waiting.filter((w) => w.path.startsWith(prefix)).length,
    fail: (prefix: string) => void failing.add(prefix),
    unfail: (prefix: string) => void failing.delete(prefix),
    /** Resolves once an answer relayed from now on carries `pattern`. */
    passed: (pattern: string) => new Promise<void>((resolve) => watchers.push({ pattern, resolve })),
    /** Resolves once nothing has been relayed, and nothing is in flight but held or streaming requests, for `ms`. */
    async quiet(ms: number, streaming = 0): Promise<void> {
      while (inFlight > streaming || Date.now() - lastActivity < ms) await new Promise((r) => setTimeout(r, 10));
    },
    /** The control plane gone at once: open connections cut, new ones dropped. */
    down(): void {
      down = true;
      for (const s of sockets) s.destroy();
    },
    async close(): Promise<void> {
      down = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type ControlPlaneRelay = Awaited<ReturnType<typeof startControlPlaneRelay>>;
