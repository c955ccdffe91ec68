import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';

/** SSO login (OIDC authorization code + PKCE) under /v1/auth/sso. */
export function ssoRouters(_deps: ControlPlaneDeps): Router[] {
  return [];
}
