import * as oidc from 'openid-client';
import { LRUCache } from 'lru-cache';
import { AppError } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logger.js';
import { createGuardedFetch, urlRefusal, type OutboundPolicy } from '../outbound/guard.js';

/** The claims the login uses, from the validated ID token merged with UserInfo. */
export type IdentityClaims = Record<string, unknown> & { sub: string };

/** One org's relying-party settings, with the client secret already opened. */
export interface OidcClientSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Changes whenever the settings change, so a cached discovery is never stale. */
  version: string;
}

export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface SsoOidc {
  authorizationUrl(settings: OidcClientSettings, request: AuthorizationRequest): Promise<URL>;
  /** Exchanges the code at the token endpoint and validates the ID token (issuer, audience, nonce, signature). */
  exchange(settings: OidcClientSettings, callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<IdentityClaims>;
}

export const SSO_SCOPES = 'openid email profile';
const DISCOVERY_TTL_MS = 5 * 60_000;
/** A failed discovery is remembered this long: an unauthenticated login link must not make us fetch the issuer on every hit. */
export const DISCOVERY_FAILURE_TTL_MS = 60_000;
const IDP_TIMEOUT_SECONDS = 10;

/** Claims UserInfo may add when the ID token carries only `sub` (common when an access token is also issued). */
const PROFILE_CLAIMS = ['email', 'email_verified', 'given_name', 'family_name', 'name', 'preferred_username'];

type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post';

/**
 * `policy`: whether the identity provider may be on a private network (and
 * over http). Every request to it (discovery, token, UserInfo, JWKS) goes
 * through the outbound guard, which checks each resolved address at connect
 * time.
 */
export function createSsoOidc(logger: Logger, policy: OutboundPolicy): SsoOidc {
  const guardedFetch = createGuardedFetch(policy);
  const discovered = new LRUCache<string, Promise<oidc.Configuration>>({ max: 500, ttl: DISCOVERY_TTL_MS });
  /** Per settings version, the client authentication the IdP accepted last. */
  const accepted = new LRUCache<string, ClientAuthMethod>({ max: 500 });

  const configure = (s: OidcClientSettings, method: ClientAuthMethod = 'client_secret_basic'): Promise<oidc.Configuration> => {
    const cacheKey = `${s.version}|${s.issuer}|${s.clientId}|${method}`;
    let pending = discovered.get(cacheKey);
    if (!pending) {
      const issuer = new URL(s.issuer);
      // Plain http only together with private issuers (a local IdP, tests); the guarded fetch refuses it otherwise.
      const insecure = policy.allowPrivate && issuer.protocol === 'http:';
      const auth = method === 'client_secret_basic' ? oidc.ClientSecretBasic(s.clientSecret) : oidc.ClientSecretPost(s.clientSecret);
      pending = oidc.discovery(issuer, s.clientId, undefined, auth, {
        timeout: IDP_TIMEOUT_SECONDS,
        execute: insecure ? [oidc.allowInsecureRequests] : [],
        // openid-client's options are a RequestInit in all but the name of the body's type.
        [oidc.customFetch]: (url, options) => guardedFetch(url, options as RequestInit),
      });
      discovered.set(cacheKey, pending);
      const failed = pending;
      failed.catch(() => discovered.set(cacheKey, failed, { ttl: DISCOVERY_FAILURE_TTL_MS }));
    }
    return pending.catch((err: unknown) => {
      throw idpFailure(logger, err, 'discovery', s.issuer);
    });
  };

  const redeem = async (
    settings: OidcClientSettings,
    method: ClientAuthMethod,
    callbackUrl: URL,
    checks: { state: string; nonce: string; codeVerifier: string },
  ): Promise<IdentityClaims> => {
    const config = await configure(settings, method);
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      pkceCodeVerifier: checks.codeVerifier,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (!idClaims) throw new AppError('forbidden', 'The identity provider did not return an ID token.');
    const claims: IdentityClaims = { ...idClaims, sub: idClaims.sub };
    const missing = PROFILE_CLAIMS.some((c) => claims[c] === undefined);
    if (missing && config.serverMetadata().userinfo_endpoint) {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      // The ID token is signed and wins; UserInfo only fills what it lacks.
      for (const [k, v] of Object.entries(info)) if (claims[k] === undefined) claims[k] = v;
    }
    return claims;
  };

  return {
    async authorizationUrl(settings, request) {
      const config = await configure(settings);
      // The browser is sent there: only to an endpoint the outbound rules would let us call ourselves.
      const endpoint = config.serverMetadata().authorization_endpoint;
      const refusal = endpoint === undefined ? 'is missing' : urlRefusal(endpoint, policy);
      if (refusal) {
        logger.warn({ issuer: settings.issuer, refusal }, 'SSO authorization endpoint refused');
        throw new AppError('upstream_unreachable', `The authorization endpoint your identity provider at ${settings.issuer} announces ${refusal}.`);
      }
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: request.redirectUri,
        scope: SSO_SCOPES,
        response_type: 'code',
        state: request.state,
        nonce: request.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
        code_challenge_method: 'S256',
      });
    },

    /**
     * Client secrets go in HTTP Basic (the OIDC default, Okta's) unless the
     * IdP refuses it with invalid_client; then once more in the form body
     * (Auth0's default). A failed client authentication does not consume the
     * code, and if the second try fails too, the first answer is the one shown.
     */
    async exchange(settings, callbackUrl, checks) {
      const first = accepted.get(settings.version) ?? 'client_secret_basic';
      try {
        return await redeem(settings, first, callbackUrl, checks);
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (oauthErrorOf(err)?.error !== 'invalid_client') throw idpFailure(logger, err, 'token', settings.issuer);
        const second: ClientAuthMethod = first === 'client_secret_basic' ? 'client_secret_post' : 'client_secret_basic';
        try {
          const claims = await redeem(settings, second, callbackUrl, checks);
          accepted.set(settings.version, second);
          return claims;
        } catch (retryErr) {
          if (retryErr instanceof AppError) throw retryErr;
          throw idpFailure(logger, err, 'token', settings.issuer);
        }
      }
    },
  };
}

const UNREACHABLE_CODES = new Set<string>([
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
  'OAUTH_TIMEOUT',
  'OAUTH_ABORT',
  'OAUTH_MISSING_SERVER_METADATA',
  'OAUTH_INVALID_SERVER_METADATA',
  'OAUTH_PARSE_ERROR',
]);

/**
 * Maps what openid-client throws to a page the user can act on: 502 when the
 * identity provider could not be reached or answered nonsense, 403 when it
 * (or our validation of its answer) refused the sign-in. The detail of the
 * failure goes to the log only.
 */
function idpFailure(logger: Logger, err: unknown, phase: 'discovery' | 'token', issuer: string): AppError {
  // Only the error's name, code and message: its cause can hold ID token claims.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
  const summary =
    err instanceof Error ? { name: err.name, code: (err as { code?: unknown }).code, message: err.message, cause } : { message: String(err) };
  logger.warn({ failure: summary, phase, issuer }, 'SSO identity provider call failed');
  // Only the OAuth error code reaches the page, reduced to its own alphabet: the
  // description is the identity provider's free text, which the log keeps.
  if (err instanceof oidc.AuthorizationResponseError) {
    logger.warn({ error: err.error, error_description: err.error_description?.slice(0, 300) }, 'SSO authorization refused');
    return new AppError('forbidden', `Your identity provider refused the sign-in (${oauthCode(err.error)}).`);
  }
  const refusal = oauthErrorOf(err);
  if (refusal) {
    logger.warn({ error: refusal.error, error_description: refusal.description?.slice(0, 300) }, 'SSO token endpoint refused');
    const hint = refusal.error === 'invalid_client' ? ' An administrator should check the client id and secret in Settings → SSO.' : '';
    return new AppError('forbidden', `Your identity provider rejected the sign-in (${oauthCode(refusal.error)}).${hint}`);
  }
  const code = err instanceof oidc.ClientError ? err.code : undefined;
  if (phase === 'discovery') {
    const why = code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' ? ' (the discovered issuer does not match the configured one)' : '';
    return new AppError('upstream_unreachable', `Could not load the OpenID configuration of your identity provider at ${issuer}${why}.`);
  }
  if (err instanceof TypeError || (code !== undefined && UNREACHABLE_CODES.has(code))) {
    return new AppError('upstream_unreachable', `Your identity provider at ${issuer} could not be reached or gave an unexpected answer.`);
  }
  return new AppError('forbidden', "The identity provider's answer failed validation (ID token issuer, audience, nonce, signature or expiry).");
}

/**
 * The OAuth error a token endpoint answered with: in the JSON body, or, for
 * a refused client authentication by HTTP Basic, in its WWW-Authenticate challenge.
 */
function oauthErrorOf(err: unknown): { error: string; description: string | undefined } | undefined {
  if (err instanceof oidc.ResponseBodyError) return { error: err.error, description: err.error_description };
  if (err instanceof oidc.WWWAuthenticateChallengeError) {
    for (const challenge of err.cause) {
      const error = challenge.parameters.error;
      if (error) return { error, description: challenge.parameters.error_description };
    }
    return err.status === 401 ? { error: 'invalid_client', description: undefined } : undefined;
  }
  return undefined;
}

/** An OAuth error code as RFC 6749 spells them (letters, digits, _ . -), at most 64 characters; anything else is not shown. */
export function oauthCode(error: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : 'an unrecognized error';
}
