import { createHash, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import { createServer } from './node-http.js';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

export { Registry };

/**
 * One registry per process, with Node's process metrics under `prefix`
 * (`npm start`'s control-plane child uses `tollgate_cp_`, so its text and
 * the proxy's can be served together on one listener).
 */
export function createMetricsRegistry(prefix = 'tollgate_'): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  return registry;
}

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** `2xx` … `5xx`: the status label, five values whatever the status. */
export function statusClass(status: number): string {
  return CLASSES[Math.floor(status / 100) - 1] ?? '5xx';
}

/** Seconds buckets for request-scale durations: 5 ms … 5 min (model calls run long). */
export const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds buckets for internal work (queries, lookups): 0.5 ms … 10 s. */
export const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export interface MetricsServerOptions {
  host: string;
  port: number;
  /** When set, a scrape must present `Authorization: Bearer <token>`. */
  token: string | undefined;
}

export interface MetricsServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Both sides hashed first: equal lengths for timingSafeEqual, so the comparison's time tells nothing, not even the token's length. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = createHash('sha256')
    .update(header?.startsWith('Bearer ') ? header.slice(7) : '')
    .digest();
  const want = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, want) && header?.startsWith('Bearer ') === true;
}

/**
 * `GET /metrics` on a listener of its own, apart from the public ports: by
 * default on loopback, so only the host (or a pod's sidecar) can read it;
 * bind it wider only together with METRICS_TOKEN or a network policy.
 */
export async function startMetricsServer(
  registry: Registry,
  options: MetricsServerOptions,
  /** Metrics text from elsewhere served after this registry's (`npm start`'s control-plane process). */
  more?: () => Promise<string>,
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('use GET\n');
      return;
    }
    if (options.token && !bearerMatches(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('metrics need the bearer token\n');
      return;
    }
    Promise.all([registry.metrics(), more?.() ?? ''])
      .then(([own, other]) => (own.endsWith('\n') || !other ? own + other : `${own}\n${other}`))
      .then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n'),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
