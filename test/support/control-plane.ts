import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import type { Clock } from '../../shared/clock.js';
import { systemClock } from '../../shared/clock.js';
import { createControlPlane } from '../../control-plane/app.js';
import type { ControlPlaneDeps } from '../../control-plane/deps.js';
import type { Database } from '../../control-plane/db/database.js';
import { bootstrapOrg, type BootstrapResult } from '../../control-plane/services/orgs/bootstrap.js';
import { createControlPlaneMetrics, instrumentDatabase } from '../../control-plane/metrics.js';
import type { Registry } from '../../shared/metrics.js';

export const TEST_MODELS_FILE = fileURLToPath(new URL('../fixtures/models.test.json', import.meta.url));

export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

export function testConfig(env: NodeJS.ProcessEnv = {}): Config {
  // A fixed sealing key so tests never write DATA_DIR/secrets.key; pass SECRETS_KEY: '' to test without one.
  // Abuse limits out of the way (suites make thousands of calls from one address and org); the tests of the limits set them low.
  const unlimited = {
    SCIM_RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_RATE_LIMIT_PER_IP_PER_MINUTE: '1000000',
    AUTH_RATE_LIMIT_PER_ORG_PER_MINUTE: '1000000',
  };
  // The test IdP listens on loopback over http: SSO tests run with private issuers allowed, and the
  // tests of that guard turn it off (SSO_ALLOW_PRIVATE_ISSUERS: 'false').
  return loadConfig(
    { MODELS_FILE: TEST_MODELS_FILE, LOG_LEVEL: 'silent', SECRETS_KEY: TEST_SECRETS_KEY, SSO_ALLOW_PRIVATE_ISSUERS: 'true', ...unlimited, ...env },
    'all',
  );
}

export interface TestControlPlane {
  url: string;
  deps: ControlPlaneDeps;
  server: Server;
  close(): Promise<void>;
}

/** The real control plane on a loopback port, over the given store. */
export async function startTestControlPlane(
  db: Database,
  options: { env?: NodeJS.ProcessEnv; clock?: Clock; registry?: Registry } = {},
): Promise<TestControlPlane> {
  const config = testConfig(options.env);
  // With a registry, the control plane is counted and its store timed as bin/ sets it up.
  const metrics = options.registry ? createControlPlaneMetrics(options.registry, () => db) : undefined;
  const deps: ControlPlaneDeps = {
    db: metrics ? instrumentDatabase(db, metrics) : db,
    config,
    clock: options.clock ?? systemClock,
    logger: createLogger(process.env.TEST_LOG_LEVEL || 'silent', 'test-control-plane'),
  };
  const server = await createControlPlane(deps, { metrics }).listen(0);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Later control-plane URLs (SCIM base, edge URLs) should name this server.
  deps.config.publicBaseUrl = url;
  return {
    url,
    deps,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let counter = 0;

/** A fresh organization with a unique slug; returns the bootstrap answer. */
export async function seedOrg(deps: ControlPlaneDeps, slug?: string): Promise<BootstrapResult> {
  counter += 1;
  const s = slug ?? `org-${process.pid}-${counter}`;
  return bootstrapOrg(deps, { slug: s, name: `Org ${s}`, ownerEmail: `owner@${s}.test` });
}

/** Minimal JSON client: returns status, headers and parsed body. */
export async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
  // Tests read arbitrary JSON shapes and assert on them with chai; typing each
  // answer would restate the contract in every test.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body };
}
