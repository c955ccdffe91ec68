import type { Context, Middleware, Next } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';

/** A store that does not answer `SELECT 1` within this is not ready. */
const READY_QUERY_TIMEOUT_MS = 2_000;

/** Ready: not shutting down, the models file loaded, the store answering. */
async function readiness(deps: ControlPlaneDeps, closing: boolean): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
  const checks = {
    accepting: !closing,
    models: deps.config.models.models.size > 0,
    store: await Promise.race([
      deps.db.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((r) => setTimeout(r, READY_QUERY_TIMEOUT_MS, false).unref()),
    ]),
  };
  return { ready: Object.values(checks).every(Boolean), checks };
}

/** `GET /healthz`: alive (listening). `GET /readyz`: ready to serve, else 503 naming the failing check. */
export function probes(deps: ControlPlaneDeps, closing: () => boolean): Middleware {
  return async function answerProbes(ctx: Context, next: Next) {
    if (ctx.path === '/healthz' && ctx.method === 'GET') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/readyz' && ctx.method === 'GET') {
      const r = await readiness(deps, closing());
      ctx.status = r.ready ? 200 : 503;
      ctx.body = { status: r.ready ? 'ready' : 'not ready', checks: r.checks };
      return;
    }
    await next();
  };
}
