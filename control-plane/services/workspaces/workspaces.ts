import type { ControlPlaneDeps } from '../../deps.js';
import type { Workspace } from '../../domain.js';
import { actorOf, assertAdmin, assertOwnOrg, type ConsoleAuth } from '../auth/console-auth.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { workspace_credit, workspace_list_for_org } from '../../stores/workspaces.js';
import { loadWorkspace } from '../auth/access.js';

/** One credit is capped so a typo (an extra few zeros) cannot mint a fortune. */
export const MAX_CREDIT_USD = 1_000_000;

export interface WorkspaceSummary {
  id: string;
  slug: string;
  balance_usd: number;
}

export interface WorkspaceDetail extends WorkspaceSummary {
  chat_completions_base_url: string;
  messages_base_url: string;
}

function summary(w: Workspace): WorkspaceSummary {
  return { id: w.id, slug: w.slug, balance_usd: w.balance_usd };
}

export async function listWorkspaces(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId: string | undefined): Promise<WorkspaceSummary[]> {
  assertOwnOrg(auth, rawOrgId);
  return (await workspace_list_for_org(deps.db, auth.orgId)).map(summary);
}

/**
 * The base URLs are what SDKs take as `baseURL`: the OpenAI client appends
 * /chat/completions, the Anthropic client appends /v1/messages.
 */
export async function showWorkspace(deps: ControlPlaneDeps, auth: ConsoleAuth, rawId: string | undefined): Promise<WorkspaceDetail> {
  const w = await loadWorkspace(deps.db, auth, rawId);
  const edge = deps.config.edgeBaseUrl.replace(/\/+$/, '');
  return {
    ...summary(w),
    chat_completions_base_url: `${edge}/${w.slug}/v1`,
    messages_base_url: `${edge}/${w.slug}/anthropic`,
  };
}

/** Adds credit: ledger row, balance, audit row and the proxy's change notice commit together. */
export async function addCredits(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawId: string | undefined,
  amountUsd: number,
): Promise<{ balance_usd: number }> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const w = await loadWorkspace(tx, auth, rawId);
    assertAdmin(auth);
    const balance = await workspace_credit(tx, { workspace_id: w.id, amount_usd: amountUsd, actor_user_id: auth.userId, now });
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'workspace.credit',
      target_type: 'workspace',
      target_id: w.id,
      detail: { workspace_slug: w.slug, amount_usd: amountUsd, balance_usd: balance },
      now,
    });
    await change_feed_publish(tx, 'workspace', w.id);
    return { balance_usd: balance };
  });
}
