import Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** API keys: POST/GET /v1/teams/:team_id/keys, DELETE /v1/keys/:key_id */
export function keysRoutes(_deps: ControlPlaneDeps): Router {
  return new Router();
}
