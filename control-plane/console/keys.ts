import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { parseValid, readValid } from '../http/body.js';
import { displayName } from './fields.js';
import { createKey, listKeys, listWorkspaceKeys, revokeKey } from '../services/workspaces/keys.js';

/** Budgets are numeric(20,9) and limits int4 in the store: bound them so no input reaches SQL that SQL would refuse. */
const MAX_BUDGET_USD = 1_000_000_000;
const MAX_PER_MINUTE = 2_147_483_647;

export const newKey = z
  .object({
    kind: z.enum(['personal', 'team']),
    name: displayName,
    budget_usd: z.number().min(0).max(MAX_BUDGET_USD).optional(),
    rpm: z.number().int().positive().max(MAX_PER_MINUTE).optional(),
    tpm: z.number().int().positive().max(MAX_PER_MINUTE).optional(),
    expires_at: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
  })
  .strict();

export const keysQuery = z.object({ team_id: z.guid().optional() }).strict();

/** API keys: GET /v1/workspaces/:workspace_id/keys?team_id=, POST/GET /v1/teams/:team_id/keys, DELETE /v1/keys/:key_id */
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

  router.delete('/v1/keys/:key_id', session, async function revokeOneKey(ctx: Context) {
    await revokeKey(deps, authOf(ctx), ctx.params.key_id);
    ctx.status = 204;
  });

  return router;
}
