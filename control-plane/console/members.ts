import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** Settings → Members: GET /v1/orgs/:org_id/members, PATCH /v1/orgs/:org_id/members/:user_id */
export function membersRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
