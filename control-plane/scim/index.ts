import type { Middleware } from 'koa';
import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';
import { requireScimToken } from './auth.js';
import { discoveryRoutes } from './discovery-routes.js';
import { scimErrors } from './errors.js';
import { usersRoutes } from './users-routes.js';

/**
 * SCIM 2.0 (docs/scim.md) under /v1/scim/v2/orgs/:org_id, with RFC 7644
 * errors. The provisioning token is checked before routing, so nothing under
 * /v1/scim — not even which paths exist — is visible without it.
 */
export function scimSurface(deps: ControlPlaneDeps): { errors: Middleware; routers: Router[] } {
  const errors = scimErrors(deps.logger);
  const auth = requireScimToken(deps);
  return {
    errors: async function scimErrorsThenAuth(ctx, next) {
      await errors(ctx, () => auth(ctx, next));
    },
    routers: [discoveryRoutes(deps), usersRoutes(deps)],
  };
}
