import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { readValid } from '../http/body.js';
import { addCredits, listWorkspaces, MAX_CREDIT_USD, showWorkspace } from '../services/workspaces/workspaces.js';

// Balances keep nine decimal places: a smaller credit would be a ledger row that moves nothing.
export const credit = z.object({ amount_usd: z.number().min(0.000000001, 'must be at least 0.000000001').max(MAX_CREDIT_USD) }).strict();

/** Workspaces and balance: GET /v1/orgs/:org_id/workspaces, GET /v1/workspaces/:workspace_id, POST /v1/workspaces/:workspace_id/credits */
export function workspacesRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.get('/v1/orgs/:org_id/workspaces', session, async function listOrgWorkspaces(ctx: Context) {
    ctx.body = await listWorkspaces(deps, authOf(ctx), ctx.params.org_id);
  });

  router.get('/v1/workspaces/:workspace_id', session, async function showOneWorkspace(ctx: Context) {
    ctx.body = await showWorkspace(deps, authOf(ctx), ctx.params.workspace_id);
  });

  router.post('/v1/workspaces/:workspace_id/credits', session, async function creditWorkspace(ctx: Context) {
    const { amount_usd } = await readValid(ctx, credit);
    ctx.body = await addCredits(deps, authOf(ctx), ctx.params.workspace_id, amount_usd);
  });

  return router;
}
