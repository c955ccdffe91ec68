import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { scimBaseUrl, USER_SCHEMA } from '../services/scim/resource.js';
import { scimOrgOf } from './auth.js';
import { listOf, serviceProviderConfig, userResourceType, userSchema } from './discovery.js';
import { SCIM_MEDIA_TYPE } from './errors.js';

/** Read-only discovery endpoints (RFC 7644 §4). */
export function discoveryRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router({ prefix: '/v1/scim/v2/orgs/:org_id' });
  const base = (ctx: Context) => scimBaseUrl(deps.config.publicBaseUrl, scimOrgOf(ctx));
  const reply = (ctx: Context, body: unknown) => {
    ctx.body = body;
    ctx.type = SCIM_MEDIA_TYPE;
  };
  const notFound = () => new AppError('not_found', 'No such resource.');

  router.get('/ServiceProviderConfig', function showServiceProviderConfig(ctx: Context) {
    reply(ctx, serviceProviderConfig(base(ctx)));
  });
  router.get('/ResourceTypes', function listResourceTypes(ctx: Context) {
    reply(ctx, listOf([userResourceType(base(ctx))]));
  });
  router.get('/ResourceTypes/:name', function showResourceType(ctx: Context) {
    if (ctx.params.name !== 'User') throw notFound();
    reply(ctx, userResourceType(base(ctx)));
  });
  router.get('/Schemas', function listSchemas(ctx: Context) {
    reply(ctx, listOf([userSchema(base(ctx))]));
  });
  router.get('/Schemas/:urn', function showSchema(ctx: Context) {
    if (ctx.params.urn !== USER_SCHEMA) throw notFound();
    reply(ctx, userSchema(base(ctx)));
  });
  return router;
}
