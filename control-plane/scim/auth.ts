import type { Context, Next } from 'koa';
import { unauthenticated } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { authenticateScimToken } from '../services/scim/tokens.js';

// Case-insensitive like the routes themselves, so no spelling of the path skips the check.
const ORG_PATH = /^\/v1\/scim\/v2\/orgs\/([^/]+)(?:\/|$)/i;

/** The organization the provisioning token resolved to: every SCIM query is scoped by it. */
export function scimOrgOf(ctx: Context): string {
  const orgId = (ctx.state as { scimOrgId?: string }).scimOrgId;
  const urlOrg = (ctx.params as Record<string, string | undefined> | undefined)?.org_id;
  if (!orgId || (urlOrg !== undefined && !sameOrg(urlOrg, orgId))) throw unauthenticated();
  return orgId;
}

function sameOrg(fromUrl: string, tokenOrg: string): boolean {
  return fromUrl.toLowerCase() === tokenOrg.toLowerCase();
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
    if (urlOrg !== undefined && !sameOrg(urlOrg, orgId)) throw unauthenticated('The provisioning token is not valid for this organization.');
    (ctx.state as { scimOrgId?: string }).scimOrgId = orgId;
    await next();
  };
}
