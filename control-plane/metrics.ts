import type { Context, Middleware, Next } from 'koa';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CALL_BUCKETS, FAST_BUCKETS, statusClass } from '../shared/metrics.js';
import type { Database, Queryable } from './db/database.js';
import { SSO_CALLBACK_PATH } from './services/sso/login.js';

/**
 * The control plane's Prometheus metrics. Routes are labelled by their
 * pattern (`/v1/teams/:team_id/keys`), never by the path asked for, so ids
 * never become label values; a path no route matched is `unmatched`.
 */
export function createControlPlaneMetrics(registry: Registry, db: () => Database | undefined) {
  const registers = [registry];
  return {
    requests: new Counter({
      name: 'tollgate_cp_http_requests_total',
      help: 'Control-plane HTTP requests, by surface, route pattern, method and status class',
      labelNames: ['surface', 'route', 'method', 'status_class'],
      registers,
    }),
    duration: new Histogram({
      name: 'tollgate_cp_http_request_duration_seconds',
      help: 'Control-plane HTTP request duration',
      labelNames: ['surface', 'route', 'method'],
      buckets: CALL_BUCKETS,
      registers,
    }),
    scim: new Counter({
      name: 'tollgate_cp_scim_operations_total',
      help: 'SCIM operations by method, resource type and outcome (success, client_error, server_error)',
      labelNames: ['method', 'resource', 'outcome'],
      registers,
    }),
    sso: new Counter({
      name: 'tollgate_cp_sso_logins_total',
      help: 'SSO sign-ins finished, by outcome (success, failure)',
      labelNames: ['outcome'],
      registers,
    }),
    query: new Histogram({
      name: 'tollgate_cp_db_query_duration_seconds',
      help: 'Store statements and transactions, by what they are (select, insert, update, delete, transaction, other)',
      labelNames: ['statement', 'outcome'],
      buckets: FAST_BUCKETS,
      registers,
    }),
    pool: new Gauge({
      name: 'tollgate_cp_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting); absent on the embedded store',
      labelNames: ['state'],
      registers,
      collect() {
        const stats = db()?.poolStats?.();
        if (!stats) return;
        for (const [state, n] of Object.entries(stats)) this.labels(state).set(n);
      },
    }),
  };
}

export type ControlPlaneMetrics = ReturnType<typeof createControlPlaneMetrics>;

const SURFACES: [string, string][] = [
  ['/v1/scim/', 'scim'],
  ['/internal/', 'internal'],
  ['/v1/auth/', 'sso'],
  ['/v1/', 'console'],
];

function surfaceOf(path: string): string {
  for (const [prefix, name] of SURFACES) if (path.startsWith(prefix)) return name;
  return 'web';
}

const outcomeOf = (status: number): string => (status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'success');

/** `Users`, `Groups`, `Schemas`, … from the route pattern; the bounded set of SCIM resource types. */
function scimResource(route: string): string {
  const m = /\/([A-Z][A-Za-z]+)(?:\/|$)/.exec(route);
  return m ? m[1]! : 'other';
}

/** Counts and times every request after the routers have answered it. */
export function httpMetrics(m: ControlPlaneMetrics): Middleware {
  return async function countRequest(ctx: Context, next: Next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const status = ctx.status;
      const surface = surfaceOf(ctx.path);
      // @koa/router leaves the matched pattern here; unmatched paths get one label value.
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const method = ctx.method;
      m.requests.labels(surface, route, method, statusClass(status)).inc();
      m.duration.labels(surface, route, method).observe((performance.now() - started) / 1000);
      if (surface === 'scim') m.scim.labels(method, scimResource(route), outcomeOf(status)).inc();
      if (route === SSO_CALLBACK_PATH) m.sso.labels(status === 302 ? 'success' : 'failure').inc();
    }
  };
}

const STATEMENTS = ['select', 'insert', 'update', 'delete', 'with'];

function statementOf(sql: string): string {
  const word = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toLowerCase() ?? 'other';
  return STATEMENTS.includes(word) ? word : 'other';
}

/** The one store seam, timed: every store's queries pass through here, so no store is touched. */
export function instrumentDatabase(db: Database, m: ControlPlaneMetrics): Database {
  const timed = async <T>(statement: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let outcome = 'error';
    try {
      const r = await run();
      outcome = 'ok';
      return r;
    } finally {
      m.query.labels(statement, outcome).observe((performance.now() - started) / 1000);
    }
  };
  const queryOf =
    (q: Queryable): Queryable['query'] =>
    (sql, params) =>
      timed(statementOf(sql), () => q.query(sql, params));
  return {
    ...db,
    kind: db.kind,
    query: queryOf(db),
    transaction: (fn) => timed('transaction', () => db.transaction((tx) => fn({ query: queryOf(tx) }))),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}
