import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { readValid } from '../http/body.js';
import { displayName } from './fields.js';
import { addTeamMember, createTeam, listTeamMembers, listTeams, removeTeamMember, showTeam } from '../services/workspaces/teams.js';

export const newTeam = z.object({ name: displayName }).strict();
export const newMember = z.object({ user_id: z.guid() }).strict();

/**
 * Teams and their members: POST/GET /v1/workspaces/:workspace_id/teams, GET /v1/teams/:team_id,
 * GET/POST /v1/teams/:team_id/members, DELETE /v1/teams/:team_id/members/:user_id
 */
export function teamsRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);

  router.post('/v1/workspaces/:workspace_id/teams', session, async function createWorkspaceTeam(ctx: Context) {
    const { name } = await readValid(ctx, newTeam);
    ctx.status = 201;
    ctx.body = await createTeam(deps, authOf(ctx), ctx.params.workspace_id, name);
  });

  router.get('/v1/workspaces/:workspace_id/teams', session, async function listWorkspaceTeams(ctx: Context) {
    ctx.body = await listTeams(deps, authOf(ctx), ctx.params.workspace_id);
  });

  router.get('/v1/teams/:team_id', session, async function showOneTeam(ctx: Context) {
    ctx.body = await showTeam(deps, authOf(ctx), ctx.params.team_id);
  });

  router.get('/v1/teams/:team_id/members', session, async function listMembersOfTeam(ctx: Context) {
    ctx.body = await listTeamMembers(deps, authOf(ctx), ctx.params.team_id);
  });

  router.post('/v1/teams/:team_id/members', session, async function addMemberToTeam(ctx: Context) {
    const { user_id } = await readValid(ctx, newMember);
    await addTeamMember(deps, authOf(ctx), ctx.params.team_id, user_id);
    ctx.status = 204;
  });

  router.delete('/v1/teams/:team_id/members/:user_id', session, async function removeMemberFromTeam(ctx: Context) {
    await removeTeamMember(deps, authOf(ctx), ctx.params.team_id, ctx.params.user_id);
    ctx.status = 204;
  });

  return router;
}
