import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** The web console: static pages on top of the console API. */
export function webRouters(_deps: ControlPlaneDeps): Router[] {
  return [];
}
