import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { notFound } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { readValid } from '../http/body.js';
import { assertOrgOwner } from '../services/auth/console-auth.js';
import { createSecretSealer } from '../services/sso/secrets.js';
import { findSsoSettings, OWNER_ONLY_SSO, removeSsoSettings, saveSsoSettings } from '../services/sso/settings.js';

/**
 * An OIDC issuer identifier's shape (OIDC Discovery §2): a URL without query
 * or fragment. Which schemes and hosts may be called is the outbound rules'
 * question (https, no private address, unless SSO_ALLOW_PRIVATE_ISSUERS),
 * asked by the service.
 */
function isIssuer(raw: string): boolean {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (u.search || u.hash || u.username || u.password) return false;
  return u.protocol === 'https:' || u.protocol === 'http:';
}

export const ssoSettingsBody = z.strictObject({
  issuer: z.string().trim().max(2048).refine(isIssuer, 'must be an https URL without query or fragment'),
  client_id: z.string().trim().min(1, 'must not be empty').max(255),
  client_secret: z.string().min(1, 'must not be empty').max(4096),
  external_id_claim: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'must be a claim name (letters, digits, _ . : / -)')
    .default('sub'),
});

/** Settings → SSO: GET/DELETE /v1/orgs/:org_id/sso (owner or admin), PUT (owner only). */
export function ssoSettingsRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const sealer = createSecretSealer(deps.config);

  router.get('/v1/orgs/:org_id/sso', requireSession(deps), async function showSsoSettings(ctx: Context) {
    const settings = await findSsoSettings(deps, authOf(ctx), ctx.params.org_id);
    if (!settings) throw notFound('SSO configuration');
    ctx.body = settings;
  });

  router.put('/v1/orgs/:org_id/sso', requireSession(deps), async function saveSso(ctx: Context) {
    const auth = authOf(ctx);
    assertOrgOwner(auth, ctx.params.org_id, OWNER_ONLY_SSO); // before the body: see members.ts
    const input = await readValid(ctx, ssoSettingsBody);
    ctx.body = await saveSsoSettings(deps, sealer, auth, ctx.params.org_id, input);
  });

  router.delete('/v1/orgs/:org_id/sso', requireSession(deps), async function removeSso(ctx: Context) {
    if (!(await removeSsoSettings(deps, authOf(ctx), ctx.params.org_id))) throw notFound('SSO configuration');
    ctx.status = 204;
  });

  return router;
}
