import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './processes.js';

/**
 * A TCP load balancer for the cluster tests, standing where a Kubernetes
 * Service stands: connection-level (L4) round robin over the backends' ports,
 * nothing parsed. Like kube-proxy it never answers a client itself: a backend
 * that refuses the connection (killed, or draining with its listener closed)
 * is passed over for the next one, so a client is failed only when no backend
 * takes it. `stop()` is a cut link: the listener closes and every connection
 * through it is destroyed, so the other side sees a reset, not a clean end.
 */
export interface Balancer {
  url: string;
  port: number;
  /** Takes connections again (after `stop`), on the same port. */
  start(): Promise<void>;
  /** Cuts the link: no new connections, the open ones destroyed. */
  stop(): Promise<void>;
  /** Sends no new connection to this backend (a pod no longer ready); open ones are left to end. */
  drop(backendPort: number): void;
  restore(backendPort: number): void;
  /** Connections made to each backend so far, by port. */
  readonly made: Map<number, number>;
}

export async function startBalancer(backendPorts: number[], port?: number): Promise<Balancer> {
  const listenPort = port ?? (await freePort());
  const dropped = new Set<number>();
  const open = new Set<Socket>();
  const made = new Map<number, number>();
  let next = 0;
  let server: Server | undefined;

  /** Tries each ready backend once, starting with the next in turn; undefined when none took it. */
  function connectBackend(tried: number, done: (backend: Socket | undefined) => void): void {
    const ready = backendPorts.filter((p) => !dropped.has(p));
    if (tried >= ready.length) return done(undefined);
    const target = ready[next++ % ready.length]!;
    const backend = createConnection({ host: '127.0.0.1', port: target });
    backend.once('connect', () => {
      made.set(target, (made.get(target) ?? 0) + 1);
      backend.removeAllListeners('error');
      done(backend);
    });
    backend.once('error', () => connectBackend(tried + 1, done));
  }

  function onClient(client: Socket): void {
    open.add(client);
    // Nothing the client sends is lost while a backend is found: reading waits.
    client.pause();
    client.on('error', () => client.destroy());
    client.once('close', () => open.delete(client));
    connectBackend(0, (backend) => {
      if (!backend) return client.destroy();
      if (client.destroyed) return backend.destroy();
      open.add(backend);
      backend.once('close', () => {
        open.delete(backend);
        client.destroy();
      });
      backend.on('error', () => backend.destroy());
      client.once('close', () => backend.destroy());
      client.pipe(backend);
      backend.pipe(client);
      client.resume();
    });
  }

  const balancer: Balancer = {
    url: `http://127.0.0.1:${listenPort}`,
    port: listenPort,
    made,
    async start() {
      if (server) return;
      const s = createServer(onClient);
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(listenPort, '127.0.0.1', () => resolve());
      });
      server = s;
    },
    async stop() {
      const s = server;
      server = undefined;
      for (const socket of open) socket.destroy();
      open.clear();
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    drop: (p) => void dropped.add(p),
    restore: (p) => void dropped.delete(p),
  };
  await balancer.start();
  return balancer;
}
