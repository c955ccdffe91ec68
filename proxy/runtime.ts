import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';

export interface RunningProxy {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Placeholder until the data plane lands: answers /healthz only. */
export async function startProxy(
  config: Config,
  _logger: Logger,
  options: { port?: number; host?: string; controlPlaneUrl: string },
): Promise<RunningProxy> {
  const server = createServer((req, res) => {
    res.statusCode = req.url === '/healthz' ? 200 : 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? config.proxyPort, options.host ?? config.host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
