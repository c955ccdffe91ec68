import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** Workspaces and balance: GET /v1/orgs/:org_id/workspaces, GET /v1/workspaces/:workspace_id, POST /v1/workspaces/:workspace_id/credits */
export function workspacesRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
