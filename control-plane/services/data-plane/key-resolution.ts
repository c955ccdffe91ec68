import type { ControlPlaneDeps } from '../../deps.js';
import { api_key_resolve } from '../../stores/api-keys.js';
import { CHANGE_CHANNEL, change_feed_latest, change_feed_since } from '../../stores/change-feed.js';
import { CHANGE_FEED_PAGE_SIZE, type ChangeEvent } from '../../../shared/contract/changes.js';
import type { KeyResolution } from '../../../shared/contract/keys.js';
import { keyBudget } from './usage.js';

/** Looks a key up by the SHA-256 of its secret; the secret itself never reaches the control plane. */
export async function resolveKey(deps: ControlPlaneDeps, keyHash: string): Promise<KeyResolution> {
  const version = await change_feed_latest(deps.db);
  const row = await api_key_resolve(deps.db, keyHash, deps.clock.now());
  if (!row) return { key: null, version };
  return {
    version,
    key: {
      id: row.id,
      org_id: row.org_id,
      workspace_id: row.workspace_id,
      workspace_slug: row.workspace_slug,
      team_id: row.team_id,
      owner_user_id: row.owner_user_id,
      revoked: row.revoked_at !== null,
      expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
      rpm: row.rpm,
      tpm: row.tpm,
      models: row.models,
      ...keyBudget(row),
      key_version: Number(row.key_version),
      balance_micros: Number(row.balance_micros),
      balance_version: Number(row.balance_version),
    },
  };
}

export async function changesSince(deps: ControlPlaneDeps, afterId: number): Promise<ChangeEvent[]> {
  const rows = await change_feed_since(deps.db, afterId, CHANGE_FEED_PAGE_SIZE);
  return rows.map((r) => ({ id: Number(r.id), topic: r.topic, subject_id: r.subject_id, at: Number(r.at) }));
}

export async function changeVersion(deps: ControlPlaneDeps): Promise<number> {
  return change_feed_latest(deps.db);
}

/**
 * Calls `onCommit` whenever a change-feed row commits (the store's NOTIFY,
 * heard by every control-plane replica). Undefined when the store cannot
 * notify (then callers poll only); resolves to the function that stops it.
 */
export function listenForChanges(deps: ControlPlaneDeps, onCommit: () => void): Promise<() => Promise<void>> | undefined {
  return deps.db.listen?.(CHANGE_CHANNEL, onCommit);
}
