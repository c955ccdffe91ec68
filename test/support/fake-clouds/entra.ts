import { randomUUID, X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { issuedTokens, type IssuedTokens } from './issued-tokens.js';
import { certificateAssertionProblem } from './entra-assertion.js';
import { bodyText, closeServer, listenLoopback, sendJson } from './relay.js';
import { selfSignedLoopback } from './self-signed.js';

const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export interface FakeEntra {
  /** `https://127.0.0.1:PORT`: a provider's `authority_url`. */
  authorityUrl: string;
  /** The certificate the server presents, for the test to trust. */
  cert: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The token a workload-identity pod has in `AZURE_FEDERATED_TOKEN_FILE`, accepted as a client assertion. */
  federatedToken: string;
  /**
   * Registers another app whose credential is a certificate made for it: its
   * client id, and the PEM file's text (private key and certificate) the
   * service signs its assertions with, as `AZURE_CLIENT_CERTIFICATE_PATH` holds it.
   */
  certificateApp(): { clientId: string; pem: string };
  /** Client assertions taken on a certificate's signature. */
  readonly certificateLogins: number;
  tokens: IssuedTokens;
  /** Every request path, in order: what the client library fetched to get its tokens. */
  paths: string[];
  /** Refused token requests, with Entra's error code. */
  refusals: string[];
  close(): Promise<void>;
}

function entraError(res: ServerResponse, status: number, error: string, code: number, description: string): void {
  sendJson(res, status, { error, error_description: `AADSTS${code}: ${description}`, error_codes: [code], timestamp: new Date().toISOString() });
}

/**
 * Microsoft Entra ID's v2.0 endpoints for one tenant and one app
 * registration, over TLS: the tenant's OpenID discovery document and the
 * token endpoint's client-credentials grant, taking the app's secret or a
 * federated token (workload identity) as its proof, or for an app with a
 * certificate a client assertion that certificate's key signed
 * (entra-assertion.ts), for the Azure OpenAI scope only, issuing
 * short-lived tokens.
 */
export async function startFakeEntra(): Promise<FakeEntra> {
  const tls = selfSignedLoopback();
  const tenantId = randomUUID();
  const clientId = randomUUID();
  const clientSecret = `secret~${randomUUID()}`;
  const federatedToken = `eyJfederated.${randomUUID()}`;
  const tokens = issuedTokens('entra-fake-', 3600);
  const paths: string[] = [];
  const refusals: string[] = [];
  const state = { base: '', certificateLogins: 0 };
  /** Apps whose credential is a certificate, by client id. */
  const certificates = new Map<string, X509Certificate>();

  function discovery(res: ServerResponse): void {
    const t = `${state.base}/${tenantId}`;
    sendJson(res, 200, {
      issuer: `${t}/v2.0`,
      authorization_endpoint: `${t}/oauth2/v2.0/authorize`,
      token_endpoint: `${t}/oauth2/v2.0/token`,
      jwks_uri: `${t}/discovery/v2.0/keys`,
      end_session_endpoint: `${t}/oauth2/v2.0/logout`,
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
    });
  }

  function token(res: ServerResponse, form: URLSearchParams): void {
    const refuse = (status: number, error: string, code: number, description: string) => {
      refusals.push(`${error} ${code}`);
      entraError(res, status, error, code, description);
    };
    const client = form.get('client_id') ?? '';
    const certificate = certificates.get(client);
    if (form.get('grant_type') !== 'client_credentials') return refuse(400, 'unsupported_grant_type', 70003, 'grant type not supported.');
    if (client !== clientId && !certificate) return refuse(400, 'unauthorized_client', 700016, 'Application not found in the directory.');
    if (form.get('scope') !== COGNITIVE_SERVICES_SCOPE) return refuse(400, 'invalid_scope', 70011, 'The provided value for scope is not valid.');
    const assertion = form.get('client_assertion_type') === JWT_BEARER_ASSERTION ? (form.get('client_assertion') ?? '') : undefined;
    if (certificate) {
      const problem =
        assertion === undefined
          ? 'no client assertion'
          : certificateAssertionProblem(assertion, certificate, client, `${state.base}/${tenantId}/oauth2/v2.0/token`);
      if (problem !== undefined) return refuse(401, 'invalid_client', 700027, `Client assertion failed: ${problem}.`);
      state.certificateLogins++;
    } else if (form.get('client_secret') !== clientSecret && assertion !== federatedToken)
      return refuse(401, 'invalid_client', 7000215, 'Invalid client secret provided.');
    const life = tokens.lifetimeSeconds;
    sendJson(res, 200, { token_type: 'Bearer', expires_in: life, ext_expires_in: life, access_token: tokens.issue() });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await bodyText(req);
    const path = (req.url ?? '/').split('?')[0]!;
    paths.push(`${req.method} ${path}`);
    if (req.method === 'GET' && path === `/${tenantId}/v2.0/.well-known/openid-configuration`) return discovery(res);
    if (req.method === 'POST' && path === `/${tenantId}/oauth2/v2.0/token`) return token(res, new URLSearchParams(text));
    if (path.startsWith('/') && !path.startsWith(`/${tenantId}/`)) return entraError(res, 400, 'invalid_request', 90002, 'Tenant not found.');
    sendJson(res, 404, { error: 'not_found' });
  }

  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => void handle(req, res).catch(() => res.destroy()));
  const port = await listenLoopback(server);
  state.base = `https://127.0.0.1:${port}`;
  return {
    authorityUrl: state.base,
    cert: tls.cert,
    tenantId,
    clientId,
    clientSecret,
    federatedToken,
    certificateApp() {
      const made = selfSignedLoopback();
      const app = randomUUID();
      certificates.set(app, new X509Certificate(made.cert));
      return { clientId: app, pem: `${made.key}${made.cert}` };
    },
    get certificateLogins() {
      return state.certificateLogins;
    },
    tokens,
    paths,
    refusals,
    close: () => closeServer(server),
  };
}
