import type { ControlPlaneDeps } from '../../deps.js';
import { audit_insert } from '../../stores/audit.js';
import { org_find_by_id, org_set_members_edit_own_keys } from '../../stores/orgs.js';

/** Settings → Keys: whether members may PATCH their own personal keys (off unless an admin turns it on). */
export interface KeySettings {
  members_edit_own_keys: boolean;
}

/** The org's key settings; `orgId` is one the caller is known to administer. */
export async function keySettings(deps: ControlPlaneDeps, orgId: string): Promise<KeySettings> {
  const org = await org_find_by_id(deps.db, orgId);
  return { members_edit_own_keys: org?.members_edit_own_keys ?? false };
}

export async function setKeySettings(deps: ControlPlaneDeps, orgId: string, actorUserId: string, s: KeySettings): Promise<KeySettings> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const org = await org_set_members_edit_own_keys(tx, orgId, s.members_edit_own_keys);
    await audit_insert(tx, {
      org_id: orgId,
      actor: `user:${actorUserId}`,
      action: 'org.key_settings',
      target_type: 'org',
      target_id: orgId,
      detail: { members_edit_own_keys: s.members_edit_own_keys },
      now,
    });
    return { members_edit_own_keys: org?.members_edit_own_keys ?? false };
  });
}
