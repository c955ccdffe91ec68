import type { Middleware } from 'koa';
import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';
import { problemErrors } from '../http/problem.js';

/** The proxy's API into the control plane (key resolution, usage, change feed) under /internal. */
export function internalSurface(deps: ControlPlaneDeps): { errors: Middleware; routers: Router[] } {
  return { errors: problemErrors(deps.logger), routers: [] };
}
