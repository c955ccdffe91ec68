import type { Context, Middleware, Next } from 'koa';
import type { ControlPlaneDeps } from '../deps.js';
import { createRequestLimiter } from './rate-limit.js';

/**
 * Limits on what anyone may do without signing in (docs/security.md): each
 * SSO login start writes a row and may fetch the issuer's discovery
 * document, each session exchange hashes and looks up a token. Counted per
 * client address (the socket's: Koa runs with `proxy: false`, so behind a
 * reverse proxy every caller shares its address — see the operator notes)
 * and, for SSO, per organization slug. Refusals are 429 problem+json with
 * `retry-after`, raised before the SSO pages' HTML handler.
 */
export interface AuthLimits {
  ssoStart: Middleware;
  sessionExchange: Middleware;
}

export function createAuthLimits(deps: ControlPlaneDeps): AuthLimits {
  const perIp = createRequestLimiter(deps.config.limits.authPerIpPerMinute, 'sign-in attempts from this address');
  const perOrg = createRequestLimiter(deps.config.limits.authPerOrgPerMinute, 'sign-in attempts for this organization');
  return {
    ssoStart: async function limitSsoStart(ctx: Context, next: Next): Promise<void> {
      await perIp.take(`ip:${ctx.ip}`);
      await perOrg.take(`org:${String(ctx.params.org_slug).toLowerCase()}`);
      await next();
    },
    sessionExchange: async function limitSessionExchange(ctx: Context, next: Next): Promise<void> {
      await perIp.take(`ip:${ctx.ip}`);
      await next();
    },
  };
}
