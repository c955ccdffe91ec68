import { hkdfSync, randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { AppError, forbidden, isUniqueViolation } from '../../../shared/errors.js';
import { SealError, seal, unseal } from '../../../shared/seal.js';
import { sha256Hex } from '../../../shared/secrets.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { SsoSettings } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { org_find_by_id, org_find_by_slug } from '../../stores/orgs.js';
import { sso_login_state_delete_expired, sso_login_state_insert, sso_login_state_take } from '../../stores/sso-login-states.js';
import { sso_settings_find } from '../../stores/sso-settings.js';
import { createSsoOidc, oauthCode, type OidcClientSettings, type SsoOidc } from './oidc.js';
import type { SecretSealer } from './secrets.js';
import { clientSecretContext } from './settings.js';
import { identityOf, resolveSsoUser, UnconfirmedSsoLink, type SsoIdentity } from './users.js';
import { openSession } from '../auth/sessions.js';

export const SSO_CALLBACK_PATH = '/v1/auth/sso/callback';
/** How long a user may spend at the identity provider before the login must start again. */
export const LOGIN_STATE_TTL_MS = 10 * 60_000;

export interface StartedLogin {
  /** The identity provider's authorization URL. */
  location: string;
  /** Goes in the browser's login cookie; without it the callback cannot open the login state. */
  browserSecret: string;
}

export interface FinishedLogin {
  token: string;
  expires_at: Date;
  userId: string;
  orgSlug: string;
}

export interface SsoLogin {
  /** `browserSecret`: the browser's login cookie when it has one, so logins in several tabs can be pending at once. */
  start(orgSlug: string, browserSecret?: string): Promise<StartedLogin>;
  /**
   * `signedIn`: the console session the browser already holds. When it is in
   * the same org it may link its own owner or admin account to the identity.
   */
  finish(query: URLSearchParams, browserSecret: string | undefined, signedIn?: { orgId: string; userId: string }): Promise<FinishedLogin>;
  /** The org behind a sign-in link; the same 404 as `start` when it has no SSO. */
  orgIdOf(orgSlug: string): Promise<string>;
}

interface LoginChecks {
  nonce: string;
  codeVerifier: string;
}

export function redirectUriOf(deps: ControlPlaneDeps): string {
  // Read per request: the public base URL is the one the IdP has registered.
  return `${deps.config.publicBaseUrl}${SSO_CALLBACK_PATH}`;
}

function checksKey(browserSecret: string, stateHash: string): Buffer {
  return Buffer.from(hkdfSync('sha256', browserSecret, stateHash, 'tollgate sso login checks', 32));
}

const RESTART = "Start the sign-in again from your organization's sign-in link.";

export function createSsoLogin(
  deps: ControlPlaneDeps,
  sealer: SecretSealer,
  client: SsoOidc = createSsoOidc(deps.logger, { allowPrivate: deps.config.ssoAllowPrivateIssuers }),
): SsoLogin {
  const clientSettings = (s: SsoSettings): OidcClientSettings => ({
    issuer: s.issuer,
    clientId: s.client_id,
    clientSecret: sealer.unseal(s.client_secret_sealed, clientSecretContext(s.org_id)),
    version: `${s.org_id}|${new Date(s.updated_at).toISOString()}`,
  });

  const ssoOrg = async (orgSlug: string) => {
    const org = await org_find_by_slug(deps.db, orgSlug);
    const settings = org && (await sso_settings_find(deps.db, org.id));
    // One answer for an unknown slug and an org without SSO: the link must not tell who is a customer, nor their name.
    if (!org || !settings) {
      throw new AppError(
        'not_found',
        `Single sign-on is not available at "${orgSlug}". Check the sign-in link; if it is right, an owner can set up SSO in Settings → SSO.`,
      );
    }
    return { org, settings };
  };

  return {
    async start(orgSlug, existingSecret) {
      const { org, settings } = await ssoOrg(orgSlug);
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const browserSecret = existingSecret ?? randomBytes(32).toString('base64url');
      const url = await client.authorizationUrl(clientSettings(settings), { redirectUri: redirectUriOf(deps), state, nonce, codeVerifier });

      const now = deps.clock.now();
      const stateHash = sha256Hex(state);
      const checks: LoginChecks = { nonce, codeVerifier };
      await sso_login_state_delete_expired(deps.db, now);
      await sso_login_state_insert(
        deps.db,
        {
          state_hash: stateHash,
          org_id: org.id,
          sealed_checks: seal(checksKey(browserSecret, stateHash), JSON.stringify(checks), `${stateHash}:${org.id}`),
          expires_at: new Date(now.getTime() + LOGIN_STATE_TTL_MS),
        },
        now,
      );
      return { location: url.href, browserSecret };
    },

    async orgIdOf(orgSlug) {
      return (await ssoOrg(orgSlug)).org.id;
    },

    async finish(query, browserSecret, signedIn) {
      const state = query.get('state');
      // Taken before anything else, so that even a refused response cannot be replayed.
      const pending = state ? await sso_login_state_take(deps.db, sha256Hex(state)) : undefined;
      const idpError = query.get('error');
      if (idpError) {
        // Anyone can put text in this URL: the page shows the error code only, the log its description.
        deps.logger.info(
          { error: idpError.slice(0, 100), error_description: query.get('error_description')?.slice(0, 300) },
          'SSO sign-in refused at the IdP',
        );
        throw forbidden(`Your identity provider refused the sign-in (${oauthCode(idpError)}). ${RESTART}`);
      }
      if (!state) throw forbidden(`The identity provider's response has no state parameter. ${RESTART}`);
      const now = deps.clock.now();
      if (!pending || new Date(pending.expires_at).getTime() <= now.getTime()) {
        throw forbidden(`This sign-in response is unknown, has expired or was already used. ${RESTART}`);
      }
      const checks = openChecks(pending.sealed_checks, browserSecret, pending.state_hash, pending.org_id);
      const code = query.get('code');
      if (!code) throw forbidden(`The identity provider's response has no authorization code. ${RESTART}`);

      const org = await org_find_by_id(deps.db, pending.org_id);
      const settings = org && (await sso_settings_find(deps.db, org.id));
      if (!org || !settings) throw forbidden('Single sign-on is no longer configured for this organization.');

      const callbackUrl = new URL(redirectUriOf(deps));
      callbackUrl.search = query.toString();
      const claims = await client.exchange(clientSettings(settings), callbackUrl, { state, ...checks });
      const identity = identityOf(claims, settings.external_id_claim);

      const signIn = () =>
        deps.db.transaction(async (tx) => {
          const fresh = (await org_find_by_id(tx, org.id)) ?? org;
          const linkable = signedIn?.orgId === org.id ? signedIn.userId : undefined;
          const { user, created } = await resolveSsoUser(tx, fresh, identity, now, linkable);
          const session = await openSession(deps, tx, org.id, user.id, { kind: 'browser' });
          await audit_insert(tx, {
            org_id: org.id,
            actor: `user:${user.id}`,
            action: 'sso.login',
            target_type: 'user',
            target_id: user.id,
            // Who signed in at the identity provider, not only the account it reached.
            detail: { issuer: settings.issuer, jit_created: created, identity: identityDetail(identity) },
            now,
          });
          return { ...session, userId: user.id, orgSlug: fresh.slug };
        });
      try {
        return await signIn();
      } catch (err) {
        // Two first logins of one person at once: the loser finds the winner's user.
        if (isUniqueViolation(err)) return signIn();
        if (err instanceof UnconfirmedSsoLink) {
          // In its own transaction: the login's rolled back.
          await audit_insert(deps.db, {
            org_id: org.id,
            actor: 'sso',
            action: 'sso.login.refused',
            target_type: 'user',
            target_id: err.userId,
            detail: { issuer: settings.issuer, reason: 'unconfirmed_identity', role: err.role, identity: identityDetail(identity) },
            now,
          });
        }
        throw err;
      }
    },
  };
}

/** The identity provider's account as the audit log names it: its identifier and the email it claimed. */
function identityDetail(identity: SsoIdentity): { external_id: string; email: string | null } {
  return { external_id: identity.externalId, email: identity.email ?? null };
}

function openChecks(sealed: string, browserSecret: string | undefined, stateHash: string, orgId: string): LoginChecks {
  const refused = forbidden(`This sign-in was started in a different browser, or the browser did not keep its sign-in cookie. ${RESTART}`);
  if (!browserSecret) throw refused;
  try {
    return JSON.parse(unseal(checksKey(browserSecret, stateHash), sealed, `${stateHash}:${orgId}`)) as LoginChecks;
  } catch (err) {
    if (err instanceof SealError) throw refused;
    throw err;
  }
}
