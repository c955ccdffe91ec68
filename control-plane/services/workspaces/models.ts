import { invalidInput } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { actorOf, assertAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { team_models_list, team_models_replace } from '../../stores/teams.js';
import { loadTeam } from '../auth/access.js';

export interface ModelPrice {
  alias: string;
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
}

/** The operator's catalog, in the order of the models file; upstream names and providers stay private. */
export function listModels(deps: ControlPlaneDeps): ModelPrice[] {
  return [...deps.config.models.models.values()].map((m) => ({
    alias: m.alias,
    input_usd_per_mtok: m.input_usd_per_mtok,
    output_usd_per_mtok: m.output_usd_per_mtok,
  }));
}

/** The team's grants; `stale_models` are those the models file no longer has (they grant nothing until the alias returns). */
export async function showTeamModels(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawTeamId: string | undefined,
): Promise<{ models: string[]; stale_models: string[] }> {
  const team = await loadTeam(deps.db, auth, rawTeamId);
  const models = await team_models_list(deps.db, team.id);
  return { models, stale_models: models.filter((a) => !deps.config.models.models.has(a)) };
}

/**
 * Replaces a team's model access list. Every alias must be in the catalog;
 * the change reaches the proxies through the `team` topic in the same commit.
 */
export async function setTeamModels(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawTeamId: string | undefined,
  aliases: readonly string[],
): Promise<{ models: string[]; stale_models: string[] }> {
  const catalog = deps.config.models.models;
  const wanted = [...new Set(aliases)].sort();
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const team = await loadTeam(tx, auth, rawTeamId);
    assertAdmin(auth);
    const unknown = wanted.filter((a) => !catalog.has(a));
    if (unknown.length) {
      throw invalidInput(`models: unknown model alias(es) ${unknown.map((a) => `"${a}"`).join(', ')}; see GET /v1/models.`);
    }
    const before = await team_models_list(tx, team.id);
    await team_models_replace(tx, team.id, wanted);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'team.models_set',
      target_type: 'team',
      target_id: team.id,
      detail: { team_name: team.name, before, after: wanted },
      now,
    });
    await change_feed_publish(tx, 'team', team.id);
    // Every alias was just checked against the catalog, so none is stale.
    return { models: await team_models_list(tx, team.id), stale_models: [] };
  });
}
