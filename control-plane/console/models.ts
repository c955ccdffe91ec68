import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** Model catalog and team model access: GET /v1/models, GET/PUT /v1/teams/:team_id/models */
export function modelsRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
