import Router from '@koa/router';
import type { Context } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser } from './users.js';
import { LIST_RESPONSE_SCHEMA, toScimUser } from './resource.js';
import { scimOrgOf } from './auth.js';
import { readScimJson } from './body.js';
import { SCIM_MEDIA_TYPE } from './errors.js';

function queryParam(ctx: Context, name: string): string | undefined {
  // Query parameter names are matched case-insensitively, like attribute names.
  for (const [k, v] of Object.entries(ctx.query)) {
    if (k.toLowerCase() === name.toLowerCase()) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

function reply(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.body = body;
  ctx.type = SCIM_MEDIA_TYPE;
}

/** /Users under /v1/scim/v2/orgs/:org_id (spec 4.1, CONTRACT §3). */
export function usersRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router({ prefix: '/v1/scim/v2/orgs/:org_id' });
  const base = () => deps.config.publicBaseUrl;

  router.post('/Users', async function createScimUser(ctx: Context) {
    const user = await createUser(deps, scimOrgOf(ctx), await readScimJson(ctx));
    const resource = toScimUser(user, base());
    ctx.set('Location', resource.meta.location);
    reply(ctx, 201, resource);
  });

  router.get('/Users', async function listScimUsers(ctx: Context) {
    const page = await listUsers(deps, scimOrgOf(ctx), {
      filter: queryParam(ctx, 'filter'),
      startIndex: queryParam(ctx, 'startIndex'),
      count: queryParam(ctx, 'count'),
    });
    reply(ctx, 200, {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: page.total,
      startIndex: page.startIndex,
      itemsPerPage: page.users.length,
      Resources: page.users.map((u) => toScimUser(u, base())),
    });
  });

  router.get('/Users/:id', async function showScimUser(ctx: Context) {
    reply(ctx, 200, toScimUser(await getUser(deps, scimOrgOf(ctx), ctx.params.id!), base()));
  });

  router.put('/Users/:id', async function replaceScimUser(ctx: Context) {
    const user = await replaceUser(deps, scimOrgOf(ctx), ctx.params.id!, await readScimJson(ctx));
    reply(ctx, 200, toScimUser(user, base()));
  });

  router.patch('/Users/:id', async function patchScimUser(ctx: Context) {
    const user = await patchUser(deps, scimOrgOf(ctx), ctx.params.id!, await readScimJson(ctx));
    reply(ctx, 200, toScimUser(user, base()));
  });

  router.delete('/Users/:id', async function deleteScimUser(ctx: Context) {
    await deleteUser(deps, scimOrgOf(ctx), ctx.params.id!);
    ctx.status = 204;
  });

  return router;
}
