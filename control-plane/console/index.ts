import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';
import { meRoutes } from './me.js';

/** Every console API router (CONTRACT §2), mounted under /v1 with problem+json errors. */
export function consoleRouters(deps: ControlPlaneDeps): Router[] {
  return [meRoutes(deps)];
}
