import { sha256Hex } from '../../../shared/secrets.js';
import { notFound } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { audit_insert } from '../../stores/audit.js';
import { gateway_session_find_by_token_hash, gateway_session_list_for_user } from '../../stores/gateway-signin.js';
import { member_find } from '../../stores/memberships.js';
import { actorOf, assertAdmin, assertOwnOrg, normalizeId, type ConsoleAuth } from '../auth/console-auth.js';
import { endSessions } from './device-flow.js';

/** RFC 7009 sign-out: whichever token is presented, its whole session ends. Unknown tokens are not an error. */
export async function revokeByToken(deps: ControlPlaneDeps, token: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const session = await gateway_session_find_by_token_hash(tx, sha256Hex(token));
    if (!session || session.revoked_at) return;
    await endSessions(tx, session.org_id, { sessionId: session.id }, 'signed_out', now);
    await audit_insert(tx, {
      org_id: session.org_id,
      actor: `user:${session.user_id}`,
      action: 'gateway_session.revoke',
      target_type: 'gateway_session',
      target_id: session.id,
      detail: { reason: 'signed_out' },
      now,
    });
  });
}

export interface DeviceView {
  id: string;
  client_version: string | null;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date;
  revoked_at: Date | null;
}

/** A member's signed-in devices: the member themself, or an admin. */
export async function listDevices(deps: ControlPlaneDeps, auth: ConsoleAuth, rawOrgId?: string, rawUserId?: string): Promise<DeviceView[]> {
  assertOwnOrg(auth, rawOrgId);
  const userId = normalizeId(rawUserId, 'Member');
  if (userId !== auth.userId) assertAdmin(auth);
  if (!(await member_find(deps.db, auth.orgId, userId))) throw notFound('Member');
  const rows = await gateway_session_list_for_user(deps.db, auth.orgId, userId);
  return rows.map((r) => ({
    id: r.id,
    client_version: r.client_version,
    created_at: r.created_at,
    last_used_at: r.last_used_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
  }));
}

/** Ends one device's session, or all of a member's (no session id), on every proxy; audited. */
export async function revokeDevices(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawOrgId: string | undefined,
  rawUserId: string | undefined,
  rawSessionId?: string,
): Promise<{ revoked: number }> {
  assertOwnOrg(auth, rawOrgId);
  const userId = normalizeId(rawUserId, 'Member');
  if (userId !== auth.userId) assertAdmin(auth);
  const sessionId = rawSessionId === undefined ? undefined : normalizeId(rawSessionId, 'Device');
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    if (!(await member_find(tx, auth.orgId, userId))) throw notFound('Member');
    const ended = await endSessions(tx, auth.orgId, { userId, ...(sessionId ? { sessionId } : {}) }, 'revoked', now);
    if (sessionId && ended.length === 0) throw notFound('Device');
    for (const id of ended) {
      await audit_insert(tx, {
        org_id: auth.orgId,
        actor: actorOf(auth),
        action: 'gateway_session.revoke',
        target_type: 'gateway_session',
        target_id: id,
        detail: { user_id: userId, reason: 'revoked' },
        now,
      });
    }
    return { revoked: ended.length };
  });
}
