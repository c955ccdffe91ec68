import type { Middleware } from 'koa';
import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';
import { createRequestLimiter } from '../http/rate-limit.js';
import { requireScimToken, scimOrgOf } from './auth.js';
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
  // Per organization, after the token: one tenant's connector (or a leaked token) cannot crowd out another's.
  const limiter = createRequestLimiter(deps.config.limits.scimPerMinute, 'SCIM requests for this organization');
  return {
    errors: async function scimErrorsThenAuth(ctx, next) {
      await errors(ctx, () =>
        auth(ctx, async () => {
          await limiter.take(scimOrgOf(ctx));
          await next();
        }),
      );
    },
    routers: [discoveryRoutes(deps), usersRoutes(deps)],
  };
}
