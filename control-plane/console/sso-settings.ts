import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { notFound } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { readValid } from '../http/body.js';
import { assertOrgAdmin } from '../services/auth/console-auth.js';
import { createSecretSealer } from '../services/sso/secrets.js';
import { findSsoSettings, removeSsoSettings, saveSsoSettings } from '../services/sso/settings.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An OIDC issuer identifier (OIDC Discovery §2): https, no query or fragment; http only on loopback (tests, local IdPs). */
function isIssuer(raw: string): boolean {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (u.search || u.hash || u.username || u.password) return false;
  return u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname));
}

export const ssoSettingsBody = z.strictObject({
  issuer: z.string().trim().max(2048).refine(isIssuer, 'must be an https URL without query or fragment (http only on localhost)'),
  client_id: z.string().trim().min(1, 'must not be empty').max(255),
  client_secret: z.string().min(1, 'must not be empty').max(4096),
  external_id_claim: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'must be a claim name (letters, digits, _ . : / -)')
    .default('sub'),
});

/** Settings → SSO: GET/PUT/DELETE /v1/orgs/:org_id/sso (owner or admin). */
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
    assertOrgAdmin(auth, ctx.params.org_id); // before the body: see members.ts
    const input = await readValid(ctx, ssoSettingsBody);
    ctx.body = await saveSsoSettings(deps, sealer, auth, ctx.params.org_id, input);
  });

  router.delete('/v1/orgs/:org_id/sso', requireSession(deps), async function removeSso(ctx: Context) {
    if (!(await removeSsoSettings(deps, authOf(ctx), ctx.params.org_id))) throw notFound('SSO configuration');
    ctx.status = 204;
  });

  return router;
}
