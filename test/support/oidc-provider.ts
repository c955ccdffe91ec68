import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type AccountClaims, type Adapter, type AdapterPayload, type Configuration } from 'oidc-provider';

/** A person at the test identity provider; extra claims (e.g. `employee_id`) go in the ID token/UserInfo too. */
export interface TestAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  [claim: string]: unknown;
}

export interface TestIdp {
  /** Issuer identifier, `http://127.0.0.1:<port>`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /**
   * What the next interaction does: sign in this account (by sub) and grant
   * consent, or refuse with `access_denied` when `deny` is set.
   */
  next: { sub?: string; deny?: boolean };
  /** Adds (or replaces) an account and makes it the next to sign in. */
  signInAs(account: TestAccount): void;
  close(): Promise<void>;
}

/** The provider's storage for one test IdP; stated explicitly so it does not warn about its default one. */
function memoryAdapters(): (name: string) => Adapter {
  const rows = new Map<string, AdapterPayload>();
  return (name) => {
    const key = (id: string) => `${name}:${id}`;
    const findBy = (field: 'uid' | 'userCode', value: string) => [...rows.values()].find((p) => p.kind === name && p[field] === value);
    return {
      async upsert(id, payload) {
        rows.set(key(id), payload);
      },
      find: async (id) => rows.get(key(id)),
      findByUid: async (uid) => findBy('uid', uid),
      findByUserCode: async (code) => findBy('userCode', code),
      async consume(id) {
        const p = rows.get(key(id));
        if (p) p.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        rows.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const [k, p] of rows) if (p.grantId === grantId) rows.delete(k);
      },
    };
  };
}

/**
 * A real, certified OpenID provider (panva/oidc-provider) on a loopback port,
 * with one confidential client whose redirect URI is `redirectUri`. Its
 * login/consent interaction is completed programmatically from `next`, so a
 * test drives the whole authorization-code flow with plain HTTP requests.
 */
export async function startTestIdp(
  redirectUri: string,
  options: { tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' } = {},
): Promise<TestIdp> {
  const clientId = `tollgate-test-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, TestAccount>();
  const next: TestIdp['next'] = {};

  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: options.tokenEndpointAuthMethod ?? 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...jwk, kid: 'test-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['given_name', 'family_name', 'name', 'employee_id'],
    },
    adapter: memoryAdapters(),
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: (): AccountClaims => ({
          ...account,
          name: [account.given_name, account.family_name].filter(Boolean).join(' ') || undefined,
        }),
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  const oidcCallback = provider.callback();

  async function interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (next.deny || !next.sub || !accounts.has(next.sub)) {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user declined.' });
      return;
    }
    const grant = new provider.Grant({ accountId: next.sub, clientId: String(details.params.client_id) });
    grant.addOIDCScope(typeof details.params.scope === 'string' ? details.params.scope : 'openid');
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: next.sub }, consent: { grantId } });
  }

  handler = (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      interact(req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    void oidcCallback(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    next,
    signInAs(account) {
      accounts.set(account.sub, account);
      next.sub = account.sub;
      next.deny = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
