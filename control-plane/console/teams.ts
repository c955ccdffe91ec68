import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** Teams and their members: POST /v1/workspaces/:workspace_id/teams, POST/DELETE /v1/teams/:team_id/members */
export function teamsRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
