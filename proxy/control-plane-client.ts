import { Pool } from 'undici';
import type { KeyResolution } from '../control-plane/services/key-resolution.js';
import type { KeyMoney, UsageReport, UsageResult } from '../control-plane/services/usage.js';
import type { ChangeEvent } from '../control-plane/services/key-resolution.js';

export class ControlPlaneUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ControlPlaneUnavailable';
  }
}

/** The proxy's client of /internal, authenticated with DATA_PLANE_TOKEN. */
export function createControlPlaneClient(baseUrl: string, token: string) {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connect: { timeout: 1_000 }, headersTimeout: 5_000, bodyTimeout: 5_000 });
  const pathBase = url.pathname.replace(/\/+$/, '');
  const auth = `Bearer ${token}`;

  async function json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    let res;
    try {
      res = await pool.request({
        method,
        path: `${pathBase}${path}`,
        headers: body === undefined ? { authorization: auth } : { authorization: auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ControlPlaneUnavailable(`control plane unreachable: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.body.text().catch((err: unknown) => {
      throw new ControlPlaneUnavailable(`control plane answer cut short: ${(err as Error).message}`, { cause: err });
    });
    if (res.statusCode >= 500 || res.statusCode === 401) {
      throw new ControlPlaneUnavailable(`control plane answered ${res.statusCode} to ${method} ${path}`);
    }
    if (res.statusCode >= 400) throw new Error(`control plane refused ${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  return {
    resolveKey: (keyHash: string) => json<KeyResolution>('GET', `/internal/keys/${keyHash}`),
    reportUsage: async (reports: UsageReport[]) => (await json<{ results: UsageResult[] }>('POST', '/internal/usage', { reports })).results,
    /** A key's money as committed now (founding a hold account Redis lost). */
    keyMoney: async (keyId: string) => (await json<{ money: KeyMoney | null }>('GET', `/internal/money/${keyId}`)).money,
    changesAfter: (after: number) => json<{ events: ChangeEvent[] }>('GET', `/internal/changes?after=${after}`),
    version: async () => (await json<{ version: number }>('GET', '/internal/changes/version')).version,
    /** Opens the push stream; the caller owns the returned body. */
    async openChangeStream(signal: AbortSignal) {
      const res = await pool.request({
        method: 'GET',
        path: `${pathBase}/internal/changes/stream`,
        headers: { authorization: auth, accept: 'text/event-stream' },
        signal,
        headersTimeout: 5_000,
        // The stream sends a heartbeat every 15 s; silence longer than this means it is dead.
        bodyTimeout: 45_000,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new ControlPlaneUnavailable(`change stream answered ${res.statusCode}`);
      }
      return res.body;
    },
    close: () => pool.close(),
  };
}

export type ControlPlaneClient = ReturnType<typeof createControlPlaneClient>;
