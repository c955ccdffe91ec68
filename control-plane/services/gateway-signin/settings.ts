import type { ControlPlaneDeps } from '../../deps.js';
import { notFound } from '../../../shared/errors.js';
import { audit_insert } from '../../stores/audit.js';
import { gateway_signin_settings_find, gateway_signin_settings_upsert } from '../../stores/gateway-signin.js';
import { actorOf, assertAdmin, assertOwnOrg, type ConsoleAuth } from '../auth/console-auth.js';
import { loadTeam } from '../auth/access.js';

export interface SigninSettingsView {
  team_id: string;
  workspace_id: string;
  budget_usd: number | null;
}

/** The team (its workspace, models and limits) and per-device budget a signed-in Claude Code gets. */
export async function showSigninSettings(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId: string | undefined): Promise<SigninSettingsView> {
  const orgId = assertOwnOrg(auth, rawOrgId);
  const found = await gateway_signin_settings_find(deps.db, orgId);
  if (!found) throw notFound('Claude Code sign-in settings');
  return { team_id: found.team_id, workspace_id: found.workspace_id, budget_usd: found.budget_usd };
}

export async function saveSigninSettings(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  input: { team_id: string; budget_usd: number | null },
): Promise<SigninSettingsView> {
  const orgId = assertOwnOrg(auth, rawOrgId);
  assertAdmin(auth);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const team = await loadTeam(tx, auth, input.team_id);
    await gateway_signin_settings_upsert(tx, orgId, team.id, input.budget_usd, now);
    await audit_insert(tx, {
      org_id: orgId,
      actor: actorOf(auth),
      action: 'gateway_signin.settings_update',
      target_type: 'team',
      target_id: team.id,
      detail: { team_name: team.name, budget_usd: input.budget_usd },
      now,
    });
    return { team_id: team.id, workspace_id: team.workspace_id, budget_usd: input.budget_usd };
  });
}
