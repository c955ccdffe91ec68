import { Pool } from 'undici';
import type { ProxySettings } from '../../shared/config.js';

/** One undici pool per provider origin, made on first use. */
export interface UpstreamPools {
  /** A property, not a method: the edge takes it on its own. */
  pool: (origin: string) => Pool;
  close(): Promise<void>;
}

export function createUpstreamPools(settings: ProxySettings): UpstreamPools {
  const pools = new Map<string, Pool>();
  return {
    pool(origin) {
      let p = pools.get(origin);
      if (!p) {
        p = new Pool(origin, {
          connect: { timeout: settings.upstreamConnectTimeoutMs },
          headersTimeout: settings.upstreamHeadersTimeoutMs,
          bodyTimeout: settings.upstreamIdleTimeoutMs,
          keepAliveTimeout: 30_000,
        });
        pools.set(origin, p);
      }
      return p;
    },
    close: async () => {
      await Promise.all([...pools.values()].map((p) => p.close()));
    },
  };
}
