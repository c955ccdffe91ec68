import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { parseValid, readValid } from '../http/body.js';
import { displayName } from './fields.js';
import { createKey, listKeys, listWorkspaceKeys, revokeKey } from '../services/workspaces/keys.js';
import { DEFAULT_GRACE_SECONDS, rotateKey, updateKey } from '../services/workspaces/key-changes.js';
import { keySettings, setKeySettings } from '../services/orgs/key-settings.js';
import { assertOrgAdmin } from '../services/auth/console-auth.js';
import { BUDGET_PERIODS } from '../../shared/budget-period.js';

/** Budgets are numeric(20,9) and limits int4 in the store: bound them so no input reaches SQL that SQL would refuse. */
const MAX_BUDGET_USD = 1_000_000_000;
const MAX_PER_MINUTE = 2_147_483_647;
const MAX_GRACE_SECONDS = 604_800;

const budget = z.number().min(0).max(MAX_BUDGET_USD);
const budgetPeriod = z.enum(BUDGET_PERIODS);
const perMinute = z.number().int().positive().max(MAX_PER_MINUTE);
const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const newKey = z
  .object({
    kind: z.enum(['personal', 'team']),
    name: displayName,
    budget_usd: budget.optional(),
    budget_period: budgetPeriod.nullable().optional(),
    rpm: perMinute.optional(),
    tpm: perMinute.optional(),
    expires_at: instant.optional(),
  })
  .strict()
  .refine((k) => !k.budget_period || k.budget_usd !== undefined, { message: 'a period needs a budget: set budget_usd too', path: ['budget_period'] });

/** PATCH /v1/keys/{key_id}: an absent field stays as it is; null clears a budget, a limit or an expiry. */
export const keyPatch = z
  .object({
    name: displayName.optional(),
    budget_usd: budget.nullable().optional(),
    budget_period: budgetPeriod.nullable().optional(),
    rpm: perMinute.nullable().optional(),
    tpm: perMinute.nullable().optional(),
    expires_at: instant.nullable().optional(),
  })
  .strict();

/** POST /v1/keys/{key_id}/rotate: how long the old secret keeps working, 0 to 7 days (default a day). */
export const rotateBody = z.object({ grace_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(DEFAULT_GRACE_SECONDS) }).strict();

export const keySettingsBody = z.object({ members_edit_own_keys: z.boolean() }).strict();

export const keysQuery = z.object({ team_id: z.guid().optional() }).strict();

/**
 * API keys: GET /v1/workspaces/:workspace_id/keys?team_id=, POST/GET /v1/teams/:team_id/keys,
 * PATCH/DELETE /v1/keys/:key_id, POST /v1/keys/:key_id/rotate, GET/PUT /v1/orgs/:org_id/key-settings.
 */
export function keysRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.post('/v1/teams/:team_id/keys', session, async function createTeamKey(ctx: Context) {
    const input = await readValid(ctx, newKey);
    ctx.status = 201;
    ctx.body = await createKey(deps, authOf(ctx), ctx.params.team_id, input);
  });

  router.get('/v1/teams/:team_id/keys', session, async function listTeamKeys(ctx: Context) {
    ctx.body = await listKeys(deps, authOf(ctx), ctx.params.team_id);
  });

  router.get('/v1/workspaces/:workspace_id/keys', session, async function listWorkspaceKeysAcrossTeams(ctx: Context) {
    const { team_id } = parseValid(keysQuery, ctx.query);
    ctx.body = await listWorkspaceKeys(deps, authOf(ctx), ctx.params.workspace_id, team_id);
  });

  router.patch('/v1/keys/:key_id', session, async function changeKey(ctx: Context) {
    const input = await readValid(ctx, keyPatch);
    ctx.body = await updateKey(deps, authOf(ctx), ctx.params.key_id, input);
  });

  router.post('/v1/keys/:key_id/rotate', session, async function rotateOneKey(ctx: Context) {
    const input = await readValid(ctx, rotateBody);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await rotateKey(deps, authOf(ctx), ctx.params.key_id, input.grace_seconds);
  });

  router.get('/v1/orgs/:org_id/key-settings', session, async function showKeySettings(ctx: Context) {
    ctx.body = await keySettings(deps, assertOrgAdmin(authOf(ctx), ctx.params.org_id));
  });

  router.put('/v1/orgs/:org_id/key-settings', session, async function updateKeySettings(ctx: Context) {
    const auth = authOf(ctx);
    const orgId = assertOrgAdmin(auth, ctx.params.org_id);
    ctx.body = await setKeySettings(deps, orgId, auth.userId, await readValid(ctx, keySettingsBody));
  });

  router.delete('/v1/keys/:key_id', session, async function revokeOneKey(ctx: Context) {
    await revokeKey(deps, authOf(ctx), ctx.params.key_id);
    ctx.status = 204;
  });

  return router;
}
