import type { Middleware } from 'koa';
import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';
import { problemErrors } from '../http/problem.js';

/** SCIM 2.0 (CONTRACT §3) under /v1/scim/v2/orgs/:org_id, with RFC 7644 errors. */
export function scimSurface(deps: ControlPlaneDeps): { errors: Middleware; routers: Router[] } {
  return { errors: problemErrors(deps.logger), routers: [] };
}
