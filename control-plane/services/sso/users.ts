import { AppError, forbidden } from '../../../shared/errors.js';
import type { Queryable } from '../../db/database.js';
import type { Org, User } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { membership_find, membership_insert } from '../../stores/memberships.js';
import {
  user_find_by_external_id,
  user_find_by_user_name,
  user_insert,
  user_sso_confirm,
  user_sso_confirmed_find,
  user_update,
} from '../../stores/users.js';
import type { IdentityClaims } from './oidc.js';

/** Who the identity provider says signed in, reduced to what user matching needs. */
export interface SsoIdentity {
  /** Value of the org's configured external id claim (default `sub`). */
  externalId: string;
  /** The `email` claim, unless the IdP marked it unverified. */
  email: string | undefined;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 256) : null;
}

export function identityOf(claims: IdentityClaims, externalIdClaim: string): SsoIdentity {
  const raw = claims[externalIdClaim];
  const externalId = typeof raw === 'number' ? String(raw) : text(raw);
  if (!externalId) {
    throw forbidden(
      `Your identity provider did not send the "${externalIdClaim}" claim, which this organization's SSO settings use ` +
        "as the user's identifier. An administrator should check Settings → SSO.",
    );
  }
  const email = text(claims.email);
  // An address the IdP itself calls unverified must not be able to claim someone's account.
  const verified = claims.email_verified !== false && claims.email_verified !== 'false';
  return {
    externalId,
    email: email && EMAIL.test(email) && verified ? email : undefined,
    givenName: text(claims.given_name),
    familyName: text(claims.family_name),
    displayName: text(claims.name),
  };
}

export interface ResolvedUser {
  user: User;
  created: boolean;
}

/**
 * An owner or admin matched by an external id the account never confirmed:
 * refused, and the refusal (who signed in at the identity provider, which
 * account it would have reached) is audited by the caller once the login's
 * transaction has rolled back.
 */
export class UnconfirmedSsoLink extends AppError {
  constructor(
    readonly userId: string,
    readonly role: 'owner' | 'admin',
    org: Org,
  ) {
    super(
      'forbidden',
      `Your identity provider's account matches an ${role} of ${org.name} whose single sign-on identity was set or changed ` +
        'by provisioning and never confirmed by that account, so it is not signed in by single sign-on. If this is your account, ' +
        'sign in to the console another way first, then open the single sign-on link in the same browser to confirm it.',
    );
  }
}

function deactivated(org: Org): AppError {
  return forbidden(
    `Your access to ${org.name} is deactivated (deprovisioned by your identity provider or removed by an administrator). ` +
      'Ask your administrator to restore it.',
  );
}

/**
 * Resolves an SSO identity to the org's user: by external id
 * first, then by userName = email (for an owner or admin only when
 * `signedInUserId`, the console session this browser already holds in the
 * org, is that account). With SCIM in use only provisioned users
 * may sign in; without it the first login creates the user (source `sso`,
 * role member). Inactive users and memberships are refused either way.
 */
export async function resolveSsoUser(tx: Queryable, org: Org, id: SsoIdentity, now: Date, signedInUserId?: string): Promise<ResolvedUser> {
  let user = await user_find_by_external_id(tx, org.id, id.externalId);
  let byEmail = false;
  if (!user && id.email) {
    user = await user_find_by_user_name(tx, org.id, id.email);
    byEmail = user !== undefined;
  }

  if (!user) {
    if (org.scim_enabled) {
      throw forbidden(
        `Your identity provider has not provisioned you in ${org.name}. This organization manages its users through ` +
          'SCIM: ask your administrator to assign you to this application in your identity provider, then sign in again.',
      );
    }
    return { user: await createJitUser(tx, org, id, now), created: true };
  }

  // A JIT user is bound to the identity that created it; another identity with the same email is someone else.
  if (byEmail && user.source === 'sso' && user.external_id && user.external_id !== id.externalId) {
    throw forbidden(
      `An account with the email ${id.email} already exists in ${org.name} for a different identity at your ` +
        'identity provider. Ask your administrator.',
    );
  }
  const membership = await membership_find(tx, org.id, user.id);
  if (!user.active || !membership || membership.status !== 'active') throw deactivated(org);
  // An email claim is only what the IdP says, and an admin could have set the IdP: an owner or
  // admin is reached by email only from a browser already signed in as them (the link is then
  // theirs to make); afterwards their external id matches.
  const role = membership.role;
  const privileged = role === 'owner' || role === 'admin';
  const bySession = signedInUserId === user.id;
  if (byEmail && privileged && !bySession) {
    throw forbidden(
      `${id.email} is an ${role} of ${org.name}, and such accounts are not linked to a single sign-on identity by email alone. ` +
        'To link it, sign in to the console as that account another way first, then open the single sign-on link in the same browser.',
    );
  }
  // Whoever can write external_id (a SCIM token an admin minted, say) could otherwise point an owner's
  // account at their own login: an owner or admin is reached by external id only once the account confirmed it.
  if (!byEmail && privileged && !bySession && (await user_sso_confirmed_find(tx, org.id, user.id)) !== id.externalId) {
    throw new UnconfirmedSsoLink(user.id, role, org);
  }

  // SCIM owns the attributes of the users it provisioned; other users are refreshed from the login. An
  // account signed in to the console may still take its first SSO identity: SCIM may not give an owner or admin one.
  if (user.source !== 'scim') user = await refreshFromLogin(tx, org, user, id, now, false);
  else if (bySession && user.external_id === null) user = await refreshFromLogin(tx, org, user, id, now, true);
  // A console session of the account itself opened this login: the identity is theirs.
  if (bySession && user.external_id === id.externalId) await user_sso_confirm(tx, org.id, user.id, id.externalId);
  return { user, created: false };
}

async function createJitUser(tx: Queryable, org: Org, id: SsoIdentity, now: Date): Promise<User> {
  const userName = id.email ?? id.externalId;
  if (!id.email && (await user_find_by_user_name(tx, org.id, userName))) {
    throw forbidden(`A different account named "${userName}" already exists in ${org.name}. Ask your administrator.`);
  }
  const user = await user_insert(
    tx,
    org.id,
    'sso',
    {
      user_name: userName,
      external_id: id.externalId,
      given_name: id.givenName,
      family_name: id.familyName,
      display_name: id.displayName,
      emails: id.email ? [{ value: id.email, primary: true }] : [],
      active: true,
    },
    now,
  );
  await membership_insert(tx, { org_id: org.id, user_id: user.id, role: 'member', status: 'active' });
  // Made by this identity's own login, so it is confirmed (should the account later become an admin).
  await user_sso_confirm(tx, org.id, user.id, id.externalId);
  await audit_insert(tx, {
    org_id: org.id,
    actor: `user:${user.id}`,
    action: 'sso.user_jit_create',
    target_type: 'user',
    target_id: user.id,
    detail: { user_name: user.user_name, role: 'member' },
    now,
  });
  return user;
}

async function refreshFromLogin(tx: Queryable, org: Org, user: User, id: SsoIdentity, now: Date, externalIdOnly: boolean): Promise<User> {
  if (externalIdOnly) id = { ...id, email: undefined, givenName: null, familyName: null, displayName: null };
  const next = {
    external_id: user.external_id ?? id.externalId,
    given_name: id.givenName ?? user.given_name,
    family_name: id.familyName ?? user.family_name,
    display_name: id.displayName ?? user.display_name,
    emails:
      id.email && !user.emails.some((e) => e.value.toLowerCase() === id.email!.toLowerCase())
        ? [{ value: id.email, primary: true }, ...user.emails.map((e) => ({ ...e, primary: false }))]
        : user.emails,
    active: user.active,
  };
  const changed = (['external_id', 'given_name', 'family_name', 'display_name', 'emails'] as const).filter(
    (k) => JSON.stringify(next[k]) !== JSON.stringify(user[k]),
  );
  if (!changed.length) return user;
  const updated = (await user_update(tx, org.id, user.id, next, now)) ?? user;
  await audit_insert(tx, {
    org_id: org.id,
    actor: `user:${user.id}`,
    action: 'sso.user_update',
    target_type: 'user',
    target_id: user.id,
    detail: { changed },
    now,
  });
  return updated;
}
