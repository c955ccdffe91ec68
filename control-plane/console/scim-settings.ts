import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** Settings → SCIM: GET/PUT /v1/orgs/:org_id/scim, POST /v1/orgs/:org_id/scim/token */
export function scimSettingsRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
