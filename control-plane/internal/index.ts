import Router from '@koa/router';
import { PassThrough } from 'node:stream';
import type { Context, Middleware, Next } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { problemErrors } from '../http/problem.js';
import { parseValid, readJson } from '../http/body.js';
import { invalidInput, unauthenticated } from '../../shared/errors.js';
import { safeEqual } from '../../shared/secrets.js';
import { changesSince, changeVersion, resolveKey } from '../services/data-plane/key-resolution.js';
import { keyMoney, recordUsage, recordUsageByKey } from '../services/data-plane/usage.js';
import { createChangeHub } from './change-hub.js';
import { keyHashSchema } from '../../shared/contract/keys.js';
import { USAGE_ANSWER_PER_KEY, usageBatchSchema } from '../../shared/contract/usage.js';
import { keyIdSchema } from '../../shared/contract/money.js';
import { deploymentReportSchema } from '../../shared/contract/deployments.js';
import { recordDeploymentReport } from '../services/deployments/health.js';

const HEARTBEAT_MS = 15_000;

/** Only a proxy holding DATA_PLANE_TOKEN may call /internal; compared timing-safely. */
function requireDataPlane(deps: ControlPlaneDeps): Middleware {
  return async function authenticateDataPlane(ctx: Context, next: Next) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!match || !safeEqual(match[1]!, deps.config.dataPlaneToken)) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw unauthenticated('The data-plane token is missing or wrong.');
    }
    await next();
  };
}

/** The proxy's API into the control plane (key resolution, usage, change feed) under /internal. */
export function internalSurface(deps: ControlPlaneDeps): { errors: Middleware; routers: Router[]; endChangeStreams(): void } {
  const hub = createChangeHub(deps);
  // How to end each open change stream at shutdown: they are not calls in
  // flight, and the proxies behind them reconnect (to another replica).
  const streams = new Set<() => void>();
  const router = new Router({ prefix: '/internal' });
  router.use(requireDataPlane(deps));

  router.get('/keys/:hash', async function showKey(ctx: Context) {
    const hash = String(ctx.params.hash);
    if (!keyHashSchema.safeParse(hash).success) throw invalidInput('The key hash must be 64 lowercase hex characters.');
    ctx.body = await resolveKey(deps, hash);
  });

  router.get('/money/:keyId', async function showKeyMoney(ctx: Context) {
    const keyId = String(ctx.params.keyId);
    if (!keyIdSchema.safeParse(keyId).success) throw invalidInput('The key id must be a UUID.');
    ctx.body = { money: await keyMoney(deps, keyId) };
  });

  router.post('/usage', async function reportUsage(ctx: Context) {
    const { reports } = parseValid(usageBatchSchema, await readJson(ctx));
    // A proxy that asks is answered per key; one from before the per-key answer gets one result per report.
    ctx.body =
      ctx.query.answer === USAGE_ANSWER_PER_KEY ? { keys: await recordUsageByKey(deps, reports) } : { results: await recordUsage(deps, reports) };
  });

  router.post('/deployments/health', async function reportDeploymentHealth(ctx: Context) {
    await recordDeploymentReport(deps, parseValid(deploymentReportSchema, await readJson(ctx)));
    ctx.status = 204;
  });

  router.get('/changes/version', async function showVersion(ctx: Context) {
    ctx.body = { version: await changeVersion(deps) };
  });

  router.get('/changes', async function listChanges(ctx: Context) {
    const after = Number(ctx.query.after ?? 0);
    if (!Number.isInteger(after) || after < 0) throw invalidInput('after must be a non-negative integer.');
    ctx.body = { events: await changesSince(deps, after) };
  });

  // Server-sent events: one `ready` with the current version, then `change` frames as rows commit.
  router.get('/changes/stream', async function streamChanges(ctx: Context) {
    const out = new PassThrough();
    const unsubscribe = await hub.subscribe((events) => {
      for (const e of events) out.write(`event: change\nid: ${e.id}\ndata: ${JSON.stringify(e)}\n\n`);
    });
    const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const stop = () => {
      streams.delete(shutdown);
      clearInterval(heartbeat);
      unsubscribe();
      out.end();
    };
    const socket = ctx.req.socket;
    const shutdown = () => {
      // The connection goes too, once the stream's end is written: a keep-alive
      // socket left idle would hold the server's close until the grace period.
      ctx.res.once('finish', () => socket.end());
      stop();
    };
    streams.add(shutdown);
    ctx.req.once('close', stop);
    ctx.res.once('close', stop);
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('cache-control', 'no-store');
    ctx.body = out;
    out.write(`event: ready\ndata: ${JSON.stringify({ version: hub.position() ?? 0 })}\n\n`);
  });

  return {
    errors: problemErrors(deps.logger),
    routers: [router],
    endChangeStreams() {
      for (const end of [...streams]) end();
    },
  };
}
