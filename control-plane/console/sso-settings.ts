import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** SSO settings: PUT /v1/orgs/:org_id/sso */
export function ssoSettingsRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
