import type { Context, Next } from 'koa';
import { unauthenticated } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { authenticateScimToken } from '../services/scim-tokens.js';

const ORG_PATH = /^\/v1\/scim\/v2\/orgs\/([^/]+)(?:\/|$)/;

/** The organization the provisioning token resolved to: every SCIM query is scoped by it. */
export function scimOrgOf(ctx: Context): string {
  const orgId = (ctx.state as { scimOrgId?: string }).scimOrgId;
  if (!orgId) throw unauthenticated();
  return orgId;
}

/**
 * Everything under /v1/scim needs the organization's provisioning token, and
 * the org id in the URL must be the token's own: a token never reads or
 * writes another organization, and a mismatch answers 401 like any token
 * that is not valid for this URL.
 */
export function requireScimToken(deps: ControlPlaneDeps) {
  return async function authenticateScim(ctx: Context, next: Next): Promise<void> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!match) throw unauthenticated('A provisioning token is required: Authorization: Bearer <token>.');
    const orgId = await authenticateScimToken(deps, match[1]!);
    if (!orgId) throw unauthenticated('The provisioning token is invalid, was regenerated, or SCIM is disabled for this organization.');
    const urlOrg = ORG_PATH.exec(ctx.path)?.[1];
    if (urlOrg !== undefined && urlOrg !== orgId) throw unauthenticated('The provisioning token is not valid for this organization.');
    (ctx.state as { scimOrgId?: string }).scimOrgId = orgId;
    await next();
  };
}
