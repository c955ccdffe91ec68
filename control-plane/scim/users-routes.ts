import Router from '@koa/router';
import type { Context } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser, type ListQuery } from '../services/scim/users.js';
import { LIST_RESPONSE_SCHEMA, toScimUser } from '../services/scim/resource.js';
import { parseProjection, project, type Projection } from './attributes.js';
import type { User } from '../domain.js';
import { scimOrgOf } from './auth.js';
import { readScimJson } from './body.js';
import { SCIM_MEDIA_TYPE } from './errors.js';
import { parseSearchRequest } from './search.js';

function queryParam(ctx: Context, name: string): string | undefined {
  // Query parameter names are matched case-insensitively, like attribute names.
  for (const [k, v] of Object.entries(ctx.query)) {
    if (k.toLowerCase() === name.toLowerCase()) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/** attributes / excludedAttributes as query parameters: on GET, and on POST, PUT and PATCH answers (RFC 7644 §3.9). */
function projectionOf(ctx: Context): Projection {
  return parseProjection(queryParam(ctx, 'attributes'), queryParam(ctx, 'excludedAttributes'));
}

function reply(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.body = body;
  ctx.type = SCIM_MEDIA_TYPE;
}

/** /Users under /v1/scim/v2/orgs/:org_id (docs/scim.md). */
export function usersRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router({ prefix: '/v1/scim/v2/orgs/:org_id' });
  const base = () => deps.config.publicBaseUrl;
  const present = (user: User, projection: Projection) => project(toScimUser(user, base()), projection);

  router.post('/Users', async function createScimUser(ctx: Context) {
    const projection = projectionOf(ctx);
    const user = await createUser(deps, scimOrgOf(ctx), await readScimJson(ctx));
    ctx.set('Location', toScimUser(user, base()).meta.location);
    reply(ctx, 201, present(user, projection));
  });

  const replyList = async (ctx: Context, query: ListQuery, projection: Projection) => {
    const page = await listUsers(deps, scimOrgOf(ctx), query);
    reply(ctx, 200, {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: page.total,
      startIndex: page.startIndex,
      itemsPerPage: page.users.length,
      Resources: page.users.map((u) => present(u, projection)),
    });
  };

  router.get('/Users', async function listScimUsers(ctx: Context) {
    const query = { filter: queryParam(ctx, 'filter'), startIndex: queryParam(ctx, 'startIndex'), count: queryParam(ctx, 'count') };
    await replyList(ctx, query, projectionOf(ctx));
  });

  // RFC 7644 §3.4.3; at the root too, where User is the only resource type searched.
  router.post(['/Users/.search', '/.search'], async function searchScimUsers(ctx: Context) {
    const { query, projection } = parseSearchRequest(await readScimJson(ctx));
    await replyList(ctx, query, projection);
  });

  router.get('/Users/:id', async function showScimUser(ctx: Context) {
    const projection = projectionOf(ctx);
    reply(ctx, 200, present(await getUser(deps, scimOrgOf(ctx), ctx.params.id!), projection));
  });

  router.put('/Users/:id', async function replaceScimUser(ctx: Context) {
    const projection = projectionOf(ctx);
    const user = await replaceUser(deps, scimOrgOf(ctx), ctx.params.id!, await readScimJson(ctx));
    reply(ctx, 200, present(user, projection));
  });

  router.patch('/Users/:id', async function patchScimUser(ctx: Context) {
    const projection = projectionOf(ctx);
    const user = await patchUser(deps, scimOrgOf(ctx), ctx.params.id!, await readScimJson(ctx));
    reply(ctx, 200, present(user, projection));
  });

  router.delete('/Users/:id', async function deleteScimUser(ctx: Context) {
    await deleteUser(deps, scimOrgOf(ctx), ctx.params.id!);
    ctx.status = 204;
  });

  return router;
}
