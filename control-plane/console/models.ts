import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { readValid } from '../http/body.js';
import { listModels, setTeamModels, showTeamModels } from '../services/workspaces/models.js';
import { listModelDeployments } from '../services/deployments/health.js';

export const modelAccess = z.object({ models: z.array(z.string().min(1).max(200)).max(1000) }).strict();

/** Model catalog, its deployments' state and team model access: GET /v1/models, GET /v1/models/deployments, GET/PUT /v1/teams/:team_id/models */
export function modelsRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.get('/v1/models', session, async function listCatalog(ctx: Context) {
    ctx.body = listModels(deps);
  });

  router.get('/v1/models/deployments', session, async function showModelDeployments(ctx: Context) {
    ctx.body = await listModelDeployments(deps, authOf(ctx));
  });

  router.get('/v1/teams/:team_id/models', session, async function showModelAccess(ctx: Context) {
    ctx.body = await showTeamModels(deps, authOf(ctx), ctx.params.team_id);
  });

  router.put('/v1/teams/:team_id/models', session, async function replaceModelAccess(ctx: Context) {
    const { models } = await readValid(ctx, modelAccess);
    ctx.body = await setTeamModels(deps, authOf(ctx), ctx.params.team_id, models);
  });

  return router;
}
