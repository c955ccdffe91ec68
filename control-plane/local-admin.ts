import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { z } from 'zod';
import { safeEqual } from '../shared/secrets.js';
import { forbidden, unauthenticated } from '../shared/errors.js';
import type { ControlPlaneDeps } from './deps.js';
import { readValid } from './http/body.js';
import { storeIdentity } from './db/store-identity.js';
import { bootstrapOrg } from './services/orgs/bootstrap.js';
import { issueConsoleToken } from './services/orgs/console-token.js';
import { operatorRotateKey, operatorUpdateKey } from './services/workspaces/key-changes.js';
import { keyPatch, rotateBody } from './console/keys.js';

export const LOCAL_SECRET_HEADER = 'x-tollgate-local-secret';
export const LOCAL_STORE_PATH = '/v1/local/store';

const bootstrapBody = z.object({ slug: z.string(), name: z.string(), owner: z.string(), owner_name: z.string().optional() }).strict();
const consoleTokenBody = z.object({ slug: z.string(), owner: z.string() }).strict();

const keyUpdateBody = z.object({ slug: z.string(), owner: z.string(), key_id: z.string(), patch: keyPatch }).strict();
const keyRotateBody = z.object({ slug: z.string(), owner: z.string(), key_id: z.string(), rotate: rotateBody }).strict();

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function fromLoopback(ctx: Context): boolean {
  return LOOPBACK.has(ctx.req.socket.remoteAddress ?? '');
}

/**
 * Lets the CLI act through a running service. `GET /v1/local/store` answers,
 * to loopback callers only, which store this service uses (a fingerprint, not
 * its address), so a CLI pointed elsewhere refuses instead of writing to a
 * store nobody reads. The writing routes exist only on the embedded store,
 * whose single-process lock keeps the CLI out: only callers that can read the
 * 0600 lock file in DATA_DIR know the secret.
 */
export function localAdminRoutes(deps: ControlPlaneDeps, localSecret: string | undefined): Router {
  const router = new Router();
  const store = storeIdentity(deps.config);
  router.get(LOCAL_STORE_PATH, async function showStore(ctx: Context) {
    if (!fromLoopback(ctx)) throw forbidden('Only callers on this machine may ask.');
    ctx.body = { kind: store.kind, fingerprint: store.fingerprint };
  });
  if (!localSecret) return router;

  const requireLocalSecret = async function checkLocalSecret(ctx: Context, next: Next) {
    if (!safeEqual(ctx.get(LOCAL_SECRET_HEADER), localSecret)) throw unauthenticated();
    await next();
  };
  router.post('/v1/local/bootstrap', requireLocalSecret, async function localBootstrap(ctx: Context) {
    const body = await readValid(ctx, bootstrapBody);
    ctx.status = 201;
    ctx.body = await bootstrapOrg(deps, { slug: body.slug, name: body.name, ownerEmail: body.owner, ownerName: body.owner_name });
  });
  router.post('/v1/local/console-token', requireLocalSecret, async function localConsoleToken(ctx: Context) {
    const body = await readValid(ctx, consoleTokenBody);
    ctx.status = 201;
    ctx.body = await issueConsoleToken(deps, { slug: body.slug, ownerEmail: body.owner });
  });
  router.post('/v1/local/key-update', requireLocalSecret, async function localKeyUpdate(ctx: Context) {
    const body = await readValid(ctx, keyUpdateBody);
    ctx.body = await operatorUpdateKey(deps, { slug: body.slug, ownerEmail: body.owner }, body.key_id, body.patch);
  });
  router.post('/v1/local/key-rotate', requireLocalSecret, async function localKeyRotate(ctx: Context) {
    const body = await readValid(ctx, keyRotateBody);
    ctx.status = 201;
    ctx.body = await operatorRotateKey(deps, { slug: body.slug, ownerEmail: body.owner }, body.key_id, body.rotate.grace_seconds);
  });
  return router;
}
