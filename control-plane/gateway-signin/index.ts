import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import { toStoreAwareError } from '../../shared/errors.js';
import type { ControlPlaneDeps } from '../deps.js';
import { readBody } from '../http/body.js';
import { createRequestLimiter } from '../http/rate-limit.js';
import {
  decideUserCode,
  DEVICE_PATH,
  normalizeUserCode,
  formatUserCode,
  OAuthError,
  pollDeviceCode,
  refreshSession,
  startDeviceAuthorization,
} from '../services/gateway-signin/device-flow.js';
import { revokeByToken } from '../services/gateway-signin/sessions.js';
import { assertSameOrigin, beginSsoLogin, signedInAs } from '../sso/index.js';
import { ssoPages, writeForm, writePage } from '../sso/page.js';
import { createSsoLogin } from '../services/sso/login.js';
import { createSecretSealer } from '../services/sso/secrets.js';

export const DISCOVERY_PATH = '/.well-known/oauth-authorization-server';
export const DEVICE_AUTHORIZATION_PATH = '/oauth/device_authorization';
export const TOKEN_PATH = '/oauth/token';
export const REVOCATION_PATH = '/oauth/revoke';
const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Form bodies are small: a code or a token and a field or two. */
const MAX_FORM_BYTES = 8 * 1024;

async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new OAuthError('invalid_request', 'Send application/x-www-form-urlencoded.');
  return new URLSearchParams(await readBody(ctx, MAX_FORM_BYTES));
}

/**
 * The token endpoints' dialect (RFC 6749 §5.2): `{error, error_description}`,
 * 400 for the protocol's own errors, no-store always. A secret never reaches
 * a log: only the path is logged, and bodies never are.
 */
function oauthErrors(deps: ControlPlaneDeps): Middleware {
  return async function oauthError(ctx: Context, next: Next): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    try {
      await next();
    } catch (thrown) {
      if (thrown instanceof OAuthError) {
        ctx.status = 400;
        ctx.body = { error: thrown.error, error_description: thrown.description };
        return;
      }
      const err = toStoreAwareError(thrown);
      if (!err.expose) deps.logger.error({ err: thrown, path: ctx.path }, 'gateway sign-in request failed');
      ctx.status = err.status;
      const error = err.status === 429 ? 'slow_down' : err.status >= 500 ? 'server_error' : 'invalid_request';
      ctx.body = { error, error_description: err.expose ? err.message : 'Something went wrong on our side. Try again in a moment.' };
    }
  };
}

const clientVersion = z
  .string()
  .regex(/^[\w.,;:\-/ ()]{1,120}$/)
  .catch('');

/** The OAuth endpoints Claude Code's /login uses (see docs/claude-code-rollout.md). */
export function gatewaySigninSurface(deps: ControlPlaneDeps): { oauth: Router; discovery: Router; pages: Router } {
  const base = () => deps.config.publicBaseUrl;
  const perIp = createRequestLimiter(deps.config.limits.authPerIpPerMinute, 'sign-in attempts from this address');

  const discovery = new Router();
  discovery.get(DISCOVERY_PATH, function serveDiscovery(ctx: Context) {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      issuer: base(),
      device_authorization_endpoint: `${base()}${DEVICE_AUTHORIZATION_PATH}`,
      token_endpoint: `${base()}${TOKEN_PATH}`,
      revocation_endpoint: `${base()}${REVOCATION_PATH}`,
      grant_types_supported: [DEVICE_CODE_GRANT, 'refresh_token'],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ['none'],
    };
  });

  const oauth = new Router();
  oauth.use(oauthErrors(deps));
  oauth.post(DEVICE_AUTHORIZATION_PATH, async function deviceAuthorization(ctx: Context) {
    await perIp.take(`ip:${ctx.ip}`);
    await readForm(ctx);
    // Claude Code sends surface=claude_code and its version in User-Agent; both are only shown in the console.
    const version = clientVersion.parse(ctx.get('user-agent')) || null;
    ctx.body = await startDeviceAuthorization(deps, version);
  });
  oauth.post(TOKEN_PATH, async function token(ctx: Context) {
    const form = await readForm(ctx);
    const grant = form.get('grant_type');
    if (grant === DEVICE_CODE_GRANT) {
      const code = form.get('device_code');
      if (!code) throw new OAuthError('invalid_request', 'device_code is required.');
      ctx.body = await pollDeviceCode(deps, code);
    } else if (grant === 'refresh_token') {
      const refresh = form.get('refresh_token');
      if (!refresh) throw new OAuthError('invalid_request', 'refresh_token is required.');
      ctx.body = await refreshSession(deps, refresh);
    } else {
      throw new OAuthError(
        grant ? 'unsupported_grant_type' : 'invalid_request',
        grant ? `grant_type ${grant} is not supported.` : 'grant_type is required.',
      );
    }
  });
  /** RFC 7009: 200 whether or not the token was known; sign-out revokes the session. */
  oauth.post(REVOCATION_PATH, async function revoke(ctx: Context) {
    const token = (await readForm(ctx)).get('token');
    if (!token) throw new OAuthError('invalid_request', 'token is required.');
    await revokeByToken(deps, token);
    ctx.status = 200;
    ctx.body = {};
  });

  return { oauth, discovery, pages: devicePages(deps, perIp) };
}

const userCodeOf = (raw: string | undefined | null) => (raw ? normalizeUserCode(raw) : undefined);

/** The browser step: confirm the code, signing in through the org's SSO first when needed. */
function devicePages(deps: ControlPlaneDeps, perIp: ReturnType<typeof createRequestLimiter>): Router {
  const pages = new Router();
  const login = createSsoLogin(deps, createSecretSealer(deps.config));
  pages.use(ssoPages(deps.logger));

  pages.get(DEVICE_PATH, async function showDevicePage(ctx: Context) {
    const code = userCodeOf(typeof ctx.query.user_code === 'string' ? ctx.query.user_code : undefined);
    const current = await signedInAs(deps, ctx);
    if (!current) {
      writeForm(ctx, {
        title: 'Sign in to Claude Code',
        paragraphs: ["Sign in with your organization's single sign-on to connect Claude Code."],
        action: `${DEVICE_PATH}/sso`,
        fields: [
          { name: 'org_slug', label: 'Organization', value: '' },
          { name: 'user_code', label: 'Code shown in Claude Code', value: code ? formatUserCode(code) : '' },
        ],
        button: 'Continue to sign in',
      });
      return;
    }
    writeForm(ctx, {
      title: 'Connect Claude Code',
      paragraphs: [
        `You are signed in as ${current.email ?? 'a member of your organization'}.`,
        'Confirm only a code that Claude Code on your own machine shows you. Its calls will be billed to you.',
      ],
      action: DEVICE_PATH,
      fields: [{ name: 'user_code', label: 'Code shown in Claude Code', value: code ? formatUserCode(code) : '' }],
      button: 'Connect Claude Code',
      deny: 'Deny',
    });
  });

  /** Starts the org's SSO login and comes back to the code's page afterwards. */
  pages.post(`${DEVICE_PATH}/sso`, async function startDeviceSso(ctx: Context) {
    assertSameOrigin(ctx, deps.config.publicBaseUrl);
    await perIp.take(`ip:${ctx.ip}`);
    const form = new URLSearchParams(await readBody(ctx, MAX_FORM_BYTES));
    const slug = (form.get('org_slug') ?? '').trim().toLowerCase();
    const code = userCodeOf(form.get('user_code'));
    await beginSsoLogin(ctx, deps, login, slug, code ? `${DEVICE_PATH}?user_code=${formatUserCode(code)}` : DEVICE_PATH);
  });

  pages.post(DEVICE_PATH, async function confirmDevice(ctx: Context) {
    assertSameOrigin(ctx, deps.config.publicBaseUrl);
    // Guesses at user codes are counted per address (RFC 8628 §5.1).
    await perIp.take(`ip:${ctx.ip}`);
    const current = await signedInAs(deps, ctx);
    if (!current) {
      ctx.redirect(DEVICE_PATH);
      return;
    }
    const form = new URLSearchParams(await readBody(ctx, MAX_FORM_BYTES));
    const approve = form.get('decision') !== 'deny';
    await decideUserCode(deps, current, form.get('user_code') ?? '', approve);
    writePage(
      ctx,
      200,
      approve ? 'Claude Code is connected' : 'Sign-in denied',
      approve ? 'You can close this window and return to Claude Code.' : 'Claude Code was not signed in.',
    );
  });
  return pages;
}
