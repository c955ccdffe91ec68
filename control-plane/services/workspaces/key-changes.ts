import type { BudgetPeriod } from '../../../shared/budget-period.js';
import { conflict, forbidden, invalidInput } from '../../../shared/errors.js';
import { displayPrefix, generateSecret, lastFour, sha256Hex } from '../../../shared/secrets.js';
import type { Queryable } from '../../db/database.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { ApiKey } from '../../domain.js';
import { actorOf, isAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { loadKey } from '../auth/access.js';
import { api_key_rotate, api_key_update, type KeyChanges } from '../../stores/api-keys.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { org_find_by_id } from '../../stores/orgs.js';
import { keyView, type KeyView } from './keys.js';
import { findOperator } from '../orgs/console-token.js';

/** A PATCH's fields: absent stays, null clears (a name cannot be cleared). */
export interface KeyPatch {
  name?: string | undefined;
  budget_usd?: number | null | undefined;
  budget_period?: BudgetPeriod | null | undefined;
  rpm?: number | null | undefined;
  tpm?: number | null | undefined;
  expires_at?: Date | null | undefined;
}

/** The grace a rotated-out secret gets unless the caller says otherwise: a day. */
export const DEFAULT_GRACE_SECONDS = 86_400;

/**
 * Owners and admins change any key of their org; a member changes only a
 * personal key of their own, and only where the org allows it
 * (`members_edit_own_keys`, off by default: a budget is usually the admin's
 * to set). Another org's key is 404 (loadKey).
 */
async function mayChange(q: Queryable, auth: ConsoleAuth, key: ApiKey): Promise<void> {
  if (isAdmin(auth)) return;
  if (key.kind !== 'personal' || key.owner_user_id !== auth.userId) {
    throw forbidden('Only owners and admins may change this key; members may change only their own personal keys.');
  }
  const org = await org_find_by_id(q, auth.orgId);
  if (!org?.members_edit_own_keys) {
    throw forbidden(
      'This organization lets only owners and admins change keys; an admin may allow members to change their own in Settings → Keys (PUT /v1/orgs/{org_id}/key-settings).',
    );
  }
}

function live(key: ApiKey, what: string): void {
  if (key.revoked_at) throw conflict(`A revoked key cannot be ${what}.`, 'key_revoked');
}

/** The fields of a PATCH that differ from the key, as the audit row records them: before and after. */
function differences(key: ApiKey, changes: KeyChanges): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(changes)) {
    const from = key[field as keyof KeyChanges];
    const same = from instanceof Date && to instanceof Date ? from.getTime() === to.getTime() : from === to;
    if (!same) out[field] = { from, to };
  }
  return out;
}

/** PATCH /v1/keys/{key_id}: audited, and on every proxy within the revocation bound (the change feed). */
export async function updateKey(deps: ControlPlaneDeps, auth: ConsoleAuth, rawKeyId: string | undefined, patch: KeyPatch): Promise<KeyView> {
  const now = deps.clock.now();
  if (patch.expires_at && patch.expires_at.getTime() <= now.getTime()) throw invalidInput('expires_at: must be in the future');
  if (patch.budget_period && patch.budget_usd === null) throw invalidInput('budget_period: a period needs a budget; budget_usd is null');
  return deps.db.transaction(async (tx) => {
    const key = await loadKey(tx, auth, rawKeyId);
    await mayChange(tx, auth, key);
    live(key, 'changed');
    const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as KeyChanges;
    if (changes.budget_period && changes.budget_usd === undefined && key.budget_usd === null) {
      throw invalidInput('budget_period: a period needs a budget; set budget_usd too');
    }
    // No budget, no period: a period left behind would come back with the next budget unasked.
    if (changes.budget_usd === null && changes.budget_period === undefined && key.budget_period !== null) changes.budget_period = null;
    const changed = differences(key, changes);
    if (!Object.keys(changed).length) return keyView(key, now);
    const updated = (await api_key_update(tx, key.id, changes, now))!;
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'key.update',
      target_type: 'key',
      target_id: key.id,
      detail: { team_id: key.team_id, kind: key.kind, name: updated.name, prefix: key.prefix, changes: changed },
      now,
    });
    await change_feed_publish(tx, 'key', key.id);
    return keyView(updated, now);
  });
}

export interface RotatedKey {
  id: string;
  key: string;
  prefix: string;
  previous_expires_at: Date;
}

/**
 * POST /v1/keys/{key_id}/rotate: a new secret for the same key (its spend,
 * budget, limits and usage stay), shown once; the old one works until the
 * grace ends (the proxy's answer for it expires then). A rotation within an
 * earlier one's grace ends that earlier secret at once: one old secret at a
 * time. Who may: as for revoking, owners, admins and a personal key's owner.
 */
export async function rotateKey(deps: ControlPlaneDeps, auth: ConsoleAuth, rawKeyId: string | undefined, graceSeconds: number): Promise<RotatedKey> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const key = await loadKey(tx, auth, rawKeyId);
    const ownsIt = key.kind === 'personal' && key.owner_user_id === auth.userId;
    if (!isAdmin(auth) && !ownsIt) throw forbidden('Only owners, admins and the owner of a personal key may rotate it.');
    live(key, 'rotated');
    const secret = generateSecret('apiKey');
    const previousExpiresAt = new Date(now.getTime() + graceSeconds * 1000);
    const rotated = (await api_key_rotate(
      tx,
      key.id,
      { key_hash: sha256Hex(secret), prefix: displayPrefix(secret), last4: lastFour(secret) },
      previousExpiresAt,
    ))!;
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'key.rotate',
      target_type: 'key',
      target_id: key.id,
      detail: {
        team_id: key.team_id,
        kind: key.kind,
        name: key.name,
        prefix: rotated.prefix,
        previous_prefix: key.prefix,
        grace_seconds: graceSeconds,
      },
      now,
    });
    // Drops every proxy's cached answers for the key: the old secret's answer now carries its grace's end.
    await change_feed_publish(tx, 'key', key.id);
    return { id: key.id, key: secret, prefix: rotated.prefix, previous_expires_at: previousExpiresAt };
  });
}

/** Who a CLI command acts as: an active owner or admin of the org, by slug and user name. */
export interface OperatorInput {
  slug: string;
  ownerEmail: string;
}

async function operatorAuth(deps: ControlPlaneDeps, input: OperatorInput): Promise<ConsoleAuth> {
  const { org, user, role } = await findOperator(deps.db, input);
  return { sessionId: 'cli', userId: user.id, orgId: org.id, role, email: user.user_name };
}

/** `npm run cli -- key-update`: a PATCH as that owner or admin (audited as them). */
export async function operatorUpdateKey(deps: ControlPlaneDeps, input: OperatorInput, keyId: string, patch: KeyPatch): Promise<KeyView> {
  return updateKey(deps, await operatorAuth(deps, input), keyId, patch);
}

/** `npm run cli -- key-rotate`: a rotation as that owner or admin. */
export async function operatorRotateKey(deps: ControlPlaneDeps, input: OperatorInput, keyId: string, graceSeconds: number): Promise<RotatedKey> {
  return rotateKey(deps, await operatorAuth(deps, input), keyId, graceSeconds);
}
