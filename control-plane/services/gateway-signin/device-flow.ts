import { randomInt } from 'node:crypto';
import { forbidden, invalidInput } from '../../../shared/errors.js';
import { displayPrefix, generateSecret, lastFour, sha256Hex } from '../../../shared/secrets.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { Queryable } from '../../db/database.js';
import { api_key_insert, api_key_rotate, api_key_update } from '../../stores/api-keys.js';
import { audit_insert } from '../../stores/audit.js';
import { change_feed_publish } from '../../stores/change-feed.js';
import { member_find } from '../../stores/memberships.js';
import {
  api_key_attach_gateway_session,
  device_grant_decide,
  device_grant_find_pending_by_user_code,
  device_grant_insert,
  device_grant_lock_by_device_code,
  device_grant_polled,
  gateway_refresh_token_insert,
  gateway_refresh_token_lock,
  gateway_refresh_token_spend,
  gateway_session_insert,
  gateway_session_live_key,
  gateway_session_revoke,
  gateway_signin_settings_find,
  type GatewaySession,
} from '../../stores/gateway-signin.js';
import type { ConsoleAuth } from '../auth/console-auth.js';

/** RFC 8628 §3.5 / RFC 6749 §5.2 error codes this flow answers with. */
export type OAuthErrorCode =
  'invalid_request' | 'unsupported_grant_type' | 'invalid_grant' | 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied';

/** Answered as `{error, error_description}` with 400, the token endpoint's dialect, never problem+json. */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}

export const DEVICE_CODE_TTL_S = 600;
export const POLL_INTERVAL_S = 5;
export const ACCESS_TOKEN_TTL_S = 3600;
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
export const DEVICE_PATH = '/oauth/device';

/** RFC 8628 §6.1: 20 consonants (no vowels: no words), 8 of them ≈ 34.6 bits, shown as XXXX-XXXX. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** What a person may type: any case, with or without the dash or spaces. */
export function normalizeUserCode(raw: string): string | undefined {
  const code = raw.toUpperCase().replace(/[^A-Z]/g, '');
  return code.length === USER_CODE_LENGTH && [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  email?: string;
}

export async function startDeviceAuthorization(deps: ControlPlaneDeps, clientVersion: string | null): Promise<DeviceAuthorization> {
  const now = deps.clock.now();
  const deviceCode = generateSecret('gatewayDeviceCode');
  const userCode = newUserCode();
  await device_grant_insert(deps.db, {
    device_code_hash: sha256Hex(deviceCode),
    user_code: userCode,
    client_version: clientVersion,
    interval_s: POLL_INTERVAL_S,
    expires_at: new Date(now.getTime() + DEVICE_CODE_TTL_S * 1000),
    now,
  });
  const verification = `${deps.config.publicBaseUrl}${DEVICE_PATH}`;
  return {
    device_code: deviceCode,
    user_code: formatUserCode(userCode),
    verification_uri: verification,
    // The user code in a URL is RFC 8628 §3.3.1's; it is no credential (the device code is).
    verification_uri_complete: `${verification}?user_code=${formatUserCode(userCode)}`,
    expires_in: DEVICE_CODE_TTL_S,
    interval: POLL_INTERVAL_S,
  };
}

/** The member must be active in the org, and the org must offer sign-in (a default team). */
async function signinTarget(q: Queryable, orgId: string, userId: string) {
  const member = await member_find(q, orgId, userId);
  if (!member || member.status !== 'active') return undefined;
  const settings = await gateway_signin_settings_find(q, orgId);
  return settings && { member, settings };
}

/** The browser step: a signed-in console user approves (or denies) the code shown in their terminal. */
export async function decideUserCode(deps: ControlPlaneDeps, auth: ConsoleAuth, rawCode: string, approve: boolean): Promise<void> {
  const code = normalizeUserCode(rawCode);
  if (!code) throw invalidInput('That is not a code Claude Code shows: it is eight letters, like BCDF-GHJK.');
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const grant = await device_grant_find_pending_by_user_code(tx, code, now);
    if (!grant) throw invalidInput('This code is unknown or has expired. Run /login again in Claude Code for a new one.');
    if (approve && !(await signinTarget(tx, auth.orgId, auth.userId))) {
      throw forbidden('Your organization has not set up Claude Code sign-in (no default team), or your membership is not active.');
    }
    await device_grant_decide(tx, grant.id, { status: approve ? 'approved' : 'denied', org_id: auth.orgId, user_id: auth.userId });
  });
}

/** The session's access key, made at sign-in: a personal key of the session's user, in the org's sign-in team. */
async function mintTokens(tx: Queryable, session: GatewaySession, budgetUsd: number | null, workspaceId: string, now: Date): Promise<TokenAnswer> {
  const access = generateSecret('apiKey');
  const key = await api_key_insert(tx, {
    org_id: session.org_id,
    workspace_id: workspaceId,
    team_id: session.team_id,
    kind: 'personal',
    owner_user_id: session.user_id,
    name: `Claude Code sign-in${session.client_version ? ` (${session.client_version})` : ''}`,
    key_hash: sha256Hex(access),
    prefix: displayPrefix(access),
    last4: lastFour(access),
    budget_usd: budgetUsd,
    rpm: null,
    tpm: null,
    expires_at: new Date(now.getTime() + ACCESS_TOKEN_TTL_S * 1000),
    created_by: session.user_id,
    now,
  });
  await api_key_attach_gateway_session(tx, key.id, session.id);
  await change_feed_publish(tx, 'key', key.id);
  return withRefreshToken(tx, session, access, now);
}

/** The token answer for a new access token, with the session's next refresh token. */
async function withRefreshToken(tx: Queryable, session: GatewaySession, access: string, now: Date): Promise<TokenAnswer> {
  const refresh = generateSecret('gatewayRefresh');
  await gateway_refresh_token_insert(tx, session.id, sha256Hex(refresh), now);
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh };
}

/**
 * A refresh: the session's one key gets a new secret and another hour; the
 * old access token stops at once. The key (its id, spend, budget and usage)
 * stays the device's for the whole session, so the per-device budget caps
 * what the device spends, not what one access token does.
 */
async function rotateTokens(tx: Queryable, session: GatewaySession, keyId: string, now: Date): Promise<TokenAnswer> {
  const access = generateSecret('apiKey');
  await api_key_rotate(tx, keyId, { key_hash: sha256Hex(access), prefix: displayPrefix(access), last4: lastFour(access) }, now);
  await api_key_update(tx, keyId, { expires_at: new Date(now.getTime() + ACCESS_TOKEN_TTL_S * 1000) }, now);
  await change_feed_publish(tx, 'key', keyId);
  return withRefreshToken(tx, session, access, now);
}

/** RFC 8628 §3.4: one poll of the device code. */
export async function pollDeviceCode(deps: ControlPlaneDeps, deviceCode: string): Promise<TokenAnswer> {
  const now = deps.clock.now();
  // A refusal is returned, not thrown, so what it wrote (the poll time, the spent grant) commits.
  const answer = await deps.db.transaction(async (tx): Promise<TokenAnswer | OAuthError> => {
    const grant = await device_grant_lock_by_device_code(tx, sha256Hex(deviceCode));
    if (!grant || grant.status === 'used') return new OAuthError('invalid_grant', 'The device code is unknown or was already used.');
    if (grant.expires_at.getTime() <= now.getTime()) return new OAuthError('expired_token', 'The device code has expired; start /login again.');
    if (grant.status === 'denied') {
      await device_grant_decide(tx, grant.id, { status: 'used' });
      return new OAuthError('access_denied', 'The sign-in was denied in the browser.');
    }
    if (grant.status === 'pending') {
      const tooSoon = grant.last_polled_at && now.getTime() - grant.last_polled_at.getTime() < grant.interval_s * 1000;
      // §3.5: a client polling faster than the interval is told to slow down, and the interval grows by 5 s.
      await device_grant_polled(tx, grant.id, now, tooSoon ? grant.interval_s + 5 : grant.interval_s);
      if (tooSoon) return new OAuthError('slow_down', `Poll no more often than every ${grant.interval_s + 5} seconds.`);
      return new OAuthError('authorization_pending', 'Waiting for the sign-in to be confirmed in the browser.');
    }
    await device_grant_decide(tx, grant.id, { status: 'used' });
    const target = await signinTarget(tx, grant.org_id!, grant.user_id!);
    if (!target) return new OAuthError('access_denied', 'Your membership is not active, or your organization no longer offers sign-in.');
    const session = await gateway_session_insert(tx, {
      org_id: grant.org_id!,
      user_id: grant.user_id!,
      team_id: target.settings.team_id,
      client_version: grant.client_version,
      expires_at: new Date(now.getTime() + SESSION_TTL_MS),
      now,
    });
    const tokens = await mintTokens(tx, session, target.settings.budget_usd, target.settings.workspace_id, now);
    await audit_insert(tx, {
      org_id: session.org_id,
      actor: `user:${session.user_id}`,
      action: 'gateway_session.sign_in',
      target_type: 'gateway_session',
      target_id: session.id,
      detail: { team_id: session.team_id, client_version: session.client_version },
      now,
    });
    return { ...tokens, ...(target.member.email ? { email: target.member.email } : {}) };
  });
  if (answer instanceof OAuthError) throw answer;
  return answer;
}

/**
 * RFC 6749 §6 with rotation: each refresh token is spent once. A spent one
 * presented again means it was copied: the whole session ends (OAuth 2.0
 * Security BCP §4.14.2), its keys are revoked, and the failure is audited.
 */
export async function refreshSession(deps: ControlPlaneDeps, refreshToken: string): Promise<TokenAnswer> {
  const now = deps.clock.now();
  const hash = sha256Hex(refreshToken);
  const outcome = await deps.db.transaction(async (tx) => {
    const found = await gateway_refresh_token_lock(tx, hash);
    if (!found) return { error: 'The refresh token is unknown.' };
    const { session } = found;
    const fail = async (reason: string, endFamily: boolean) => {
      if (endFamily) await endSessions(tx, session.org_id, { sessionId: session.id }, reason, now);
      await audit_insert(tx, {
        org_id: session.org_id,
        actor: `user:${session.user_id}`,
        action: 'gateway_session.refresh_failure',
        target_type: 'gateway_session',
        target_id: session.id,
        detail: { reason },
        now,
      });
      return { error: `The sign-in has ended (${reason}); run /login again.` };
    };
    if (session.revoked_at) return fail('revoked', false);
    if (found.used_at) return fail('refresh_token_reused', true);
    if (session.expires_at.getTime() <= now.getTime()) return fail('expired', true);
    const target = await signinTarget(tx, session.org_id, session.user_id);
    if (!target) return fail('membership_inactive', true);
    await gateway_refresh_token_spend(tx, hash, now);
    const live = await gateway_session_live_key(tx, session.id);
    const tokens = live
      ? await rotateTokens(tx, session, live.id, now)
      : await mintTokens(tx, session, target.settings.budget_usd, target.settings.workspace_id, now);
    return { tokens };
  });
  // The failure's audit entry and family revocation are committed before the refusal is answered.
  if ('error' in outcome) throw new OAuthError('invalid_grant', outcome.error ?? 'The refresh token is not valid.');
  return outcome.tokens;
}

/** Ends sessions (one, or all of a user's) and revokes their keys on every proxy through the change feed. */
export async function endSessions(
  tx: Queryable,
  orgId: string,
  target: { sessionId?: string; userId?: string },
  reason: string,
  now: Date,
): Promise<string[]> {
  const ended = await gateway_session_revoke(tx, orgId, target, reason, now);
  for (const key of ended.keys) await change_feed_publish(tx, 'key', key.id);
  return ended.sessions;
}
