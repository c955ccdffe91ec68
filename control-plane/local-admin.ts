import Router from '@koa/router';
import type { Context } from 'koa';
import { safeEqual } from '../shared/secrets.js';
import { unauthenticated, invalidInput } from '../shared/errors.js';
import type { ControlPlaneDeps } from './deps.js';
import { readJson } from './http/body.js';
import { bootstrapOrg } from './services/orgs/bootstrap.js';

export const LOCAL_SECRET_HEADER = 'x-tollgate-local-secret';

/**
 * Lets the bootstrap CLI act through a running service that holds the
 * embedded store. Only callers that can read the 0600 lock file in DATA_DIR
 * know the secret; without one configured the route does not exist.
 */
export function localAdminRoutes(deps: ControlPlaneDeps, localSecret: string | undefined): Router {
  const router = new Router();
  if (!localSecret) return router;
  router.post('/v1/local/bootstrap', async function localBootstrap(ctx: Context) {
    if (!safeEqual(ctx.get(LOCAL_SECRET_HEADER), localSecret)) throw unauthenticated();
    const body = (await readJson(ctx)) as { slug?: unknown; name?: unknown; owner?: unknown } | undefined;
    if (typeof body?.slug !== 'string' || typeof body.name !== 'string' || typeof body.owner !== 'string') {
      throw invalidInput('slug, name and owner are required strings.');
    }
    ctx.status = 201;
    ctx.body = await bootstrapOrg(deps, { slug: body.slug, name: body.name, ownerEmail: body.owner });
  });
  return router;
}
