import { periodEndMs, periodStartMs, type BudgetPeriod } from '../../../shared/budget-period.js';
import { forbidden, invalidInput } from '../../../shared/errors.js';
import { displayPrefix, generateSecret, lastFour, sha256Hex } from '../../../shared/secrets.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { ApiKey, KeyKind } from '../../domain.js';
import { actorOf, isAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { api_key_insert, api_key_list_for_team, api_key_list_for_workspace, api_key_revoke } from '../../stores/api-keys.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { team_member_exists, team_member_lock } from '../../stores/teams.js';
import { loadKey, loadTeam, loadWorkspace } from '../auth/access.js';

export interface NewKeyInput {
  kind: KeyKind;
  name: string;
  budget_usd?: number | undefined;
  budget_period?: BudgetPeriod | null | undefined;
  rpm?: number | undefined;
  tpm?: number | undefined;
  expires_at?: Date | undefined;
}

/** What the console may ever show of a key: never the secret, never its hash. */
export interface KeyView {
  id: string;
  prefix: string;
  last4: string;
  kind: KeyKind;
  name: string;
  team_id: string;
  workspace_id: string;
  owner_user_id: string | null;
  budget_usd: number | null;
  budget_period: BudgetPeriod | null;
  /** The current period's spend (null without a period budget) and when it resets. */
  period_spend_usd: number | null;
  period_resets_at: Date | null;
  spend_usd: number;
  rpm: number | null;
  tpm: number | null;
  expires_at: Date | null;
  /** The rotated-out secret works until then (null: none in grace). */
  previous_expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

/** A key's current period as `now` sees it: a count from an earlier period is a count of nothing now. */
function periodOf(k: ApiKey, now: Date): Pick<KeyView, 'period_spend_usd' | 'period_resets_at'> {
  if (!k.budget_period) return { period_spend_usd: null, period_resets_at: null };
  const t = now.getTime();
  const current = k.period_started_at !== null && new Date(k.period_started_at).getTime() === periodStartMs(k.budget_period, t);
  return { period_spend_usd: current ? k.period_spend_usd : 0, period_resets_at: new Date(periodEndMs(k.budget_period, t)) };
}

export function keyView(k: ApiKey, now: Date): KeyView {
  return {
    id: k.id,
    prefix: k.prefix,
    last4: k.last4,
    kind: k.kind,
    name: k.name,
    team_id: k.team_id,
    workspace_id: k.workspace_id,
    owner_user_id: k.owner_user_id,
    budget_usd: k.budget_usd,
    budget_period: k.budget_period,
    ...periodOf(k, now),
    spend_usd: k.spend_usd,
    rpm: k.rpm,
    tpm: k.tpm,
    expires_at: k.expires_at,
    previous_expires_at: k.previous_expires_at !== null && new Date(k.previous_expires_at) > now ? k.previous_expires_at : null,
    last_used_at: k.last_used_at,
    revoked_at: k.revoked_at,
    created_at: k.created_at,
  };
}

export type CreatedKey = Pick<
  KeyView,
  | 'id'
  | 'prefix'
  | 'kind'
  | 'name'
  | 'team_id'
  | 'workspace_id'
  | 'owner_user_id'
  | 'budget_usd'
  | 'budget_period'
  | 'rpm'
  | 'tpm'
  | 'expires_at'
  | 'created_at'
> & { key: string };

/**
 * Creates a key. A personal key belongs to the caller, who must be in the
 * team (admins too: the key dies when its owner leaves the team); a team
 * key needs owner or admin and has no owner. The returned `key` is the only
 * copy of the secret that will ever exist outside the caller's hands.
 */
export async function createKey(deps: ControlPlaneDeps, auth: ConsoleAuth, rawTeamId: string | undefined, input: NewKeyInput): Promise<CreatedKey> {
  const now = deps.clock.now();
  if (input.expires_at && input.expires_at.getTime() <= now.getTime()) {
    throw invalidInput('expires_at: must be in the future');
  }
  return deps.db.transaction(async (tx) => {
    const team = await loadTeam(tx, auth, rawTeamId);
    if (input.kind === 'team' && !isAdmin(auth)) {
      throw forbidden('Team keys need the owner or admin role; members may create personal keys.');
    }
    // Held until commit, so a concurrent removal from the team also revokes this key.
    if (input.kind === 'personal' && !(await team_member_lock(tx, team.id, auth.userId))) {
      throw forbidden('Personal keys are for members of the team; join the team first.');
    }
    const secret = generateSecret('apiKey');
    const key = await api_key_insert(tx, {
      org_id: auth.orgId,
      workspace_id: team.workspace_id,
      team_id: team.id,
      kind: input.kind,
      owner_user_id: input.kind === 'personal' ? auth.userId : null,
      name: input.name,
      key_hash: sha256Hex(secret),
      prefix: displayPrefix(secret),
      last4: lastFour(secret),
      budget_usd: input.budget_usd ?? null,
      budget_period: input.budget_period ?? null,
      rpm: input.rpm ?? null,
      tpm: input.tpm ?? null,
      expires_at: input.expires_at ?? null,
      created_by: auth.userId,
      now,
    });
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'key.create',
      target_type: 'key',
      target_id: key.id,
      detail: { team_id: team.id, team_name: team.name, kind: key.kind, name: key.name, prefix: key.prefix },
      now,
    });
    // Proxies cache "unknown key" briefly; this drops that answer if the key was tried before it existed.
    await change_feed_publish(tx, 'key', key.id);
    const v = keyView(key, now);
    return {
      id: v.id,
      key: secret,
      prefix: v.prefix,
      kind: v.kind,
      name: v.name,
      team_id: v.team_id,
      workspace_id: v.workspace_id,
      owner_user_id: v.owner_user_id,
      budget_usd: v.budget_usd,
      budget_period: v.budget_period,
      rpm: v.rpm,
      tpm: v.tpm,
      expires_at: v.expires_at,
      created_at: v.created_at,
    };
  });
}

/** A team's keys, revoked ones included (the console shows them struck through); admins and the team's members. */
export async function listKeys(deps: ControlPlaneDeps, auth: ConsoleAuth, rawTeamId: string | undefined): Promise<KeyView[]> {
  const team = await loadTeam(deps.db, auth, rawTeamId);
  if (!isAdmin(auth) && !(await team_member_exists(deps.db, team.id, auth.userId))) {
    throw forbidden("Only admins and the team's members may see its keys.");
  }
  const now = deps.clock.now();
  return (await api_key_list_for_team(deps.db, team.id)).map((k) => keyView(k, now));
}

/**
 * The workspace's keys across teams (one page, filterable by team): admins see
 * every team's, members only those of the teams they are in.
 */
export async function listWorkspaceKeys(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  teamId: string | undefined,
): Promise<(KeyView & { team_name: string })[]> {
  const w = await loadWorkspace(deps.db, auth, rawWorkspaceId);
  const rows = await api_key_list_for_workspace(deps.db, w.id, { teamId, memberUserId: isAdmin(auth) ? undefined : auth.userId });
  const now = deps.clock.now();
  return rows.map((k) => ({ ...keyView(k, now), team_name: k.team_name }));
}

/** Revokes a key (admin, or the owner of a personal key). Revoking a revoked key changes nothing and succeeds. */
export async function revokeKey(deps: ControlPlaneDeps, auth: ConsoleAuth, rawKeyId: string | undefined): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const key = await loadKey(tx, auth, rawKeyId);
    const ownsIt = key.kind === 'personal' && key.owner_user_id === auth.userId;
    if (!isAdmin(auth) && !ownsIt) throw forbidden('Only admins and the owner of a personal key may revoke it.');
    if (key.revoked_at) return;
    await api_key_revoke(tx, key.id, now);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'key.revoke',
      target_type: 'key',
      target_id: key.id,
      detail: { team_id: key.team_id, kind: key.kind, name: key.name, prefix: key.prefix },
      now,
    });
    await change_feed_publish(tx, 'key', key.id);
  });
}
