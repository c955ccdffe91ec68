import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { keyPatch, keySettingsBody, keysQuery, newKey, rotateBody } from './keys.js';
import { auditQuery, roleChange } from './members.js';
import { modelAccess } from './models.js';
import { SettingsBody } from './scim-settings.js';
import { SignIn } from './session.js';
import { ssoSettingsBody } from './sso-settings.js';
import { newMember, newTeam } from './teams.js';
import { requestsQuery, summaryQuery } from './usage.js';
import { alertEventsQuery, alertSettingsBody, newWebhookBody } from './alerts.js';
import { credit } from './workspaces.js';
import { signinSettingsBody } from './gateway-signin.js';

/** What the router cannot tell about an operation; keyed by the handler's function name. */
interface OperationNotes {
  summary: string;
  tag: string;
  /** The success status (default 200). */
  status?: number;
  /** The schema the handler validates its JSON body with. */
  body?: z.ZodType;
  /** The schema the handler validates its query string with. */
  query?: z.ZodObject;
}

/**
 * Every console API operation by handler name. The paths, methods and which
 * operations need a session come from the routers themselves, and the bodies
 * from the very zod schemas the handlers validate with, so the document
 * cannot drift from the code; a test checks that every route has notes here
 * and every note a route.
 */
export const OPERATIONS: Record<string, OperationNotes> = {
  signInWithToken: { summary: 'Trade a console token for a session cookie', tag: 'session', status: 204, body: SignIn },
  logout: { summary: 'End this session (and the browser sessions traded for it)', tag: 'session', status: 204 },
  logoutEverywhere: { summary: 'Sign out everywhere: end every session and console token of the caller in the organization', tag: 'session' },
  showMe: { summary: 'The signed-in user, their organizations and roles', tag: 'session' },
  showSsoLogin: { summary: 'The sign-in link: an HTML page whose button starts the SSO sign-in', tag: 'sso' },
  startSsoLogin: {
    summary: "Start an SSO sign-in at the organization's identity provider (same-origin form POST; redirect)",
    tag: 'sso',
    status: 303,
  },
  finishSsoLogin: { summary: 'The identity provider returns here; sets the session cookie (redirect)', tag: 'sso', status: 302 },
  listOrgMembers: { summary: "The organization's members", tag: 'members' },
  changeRole: { summary: "Change a member's role", tag: 'members', body: roleChange },
  revokeMembersPersonalKeys: { summary: 'Revoke every personal key of a deactivated member, in all teams', tag: 'members' },
  showAuditTrail: { summary: "The organization's audit trail, newest first", tag: 'members', query: auditQuery },
  showSignin: { summary: 'The team and per-device budget a developer signed in through Claude Code gets', tag: 'claude-code' },
  saveSignin: { summary: 'Choose the team and per-device budget for Claude Code sign-in', tag: 'claude-code', body: signinSettingsBody },
  showDevices: { summary: "A member's Claude Code sign-ins (devices)", tag: 'claude-code' },
  revokeAllDevices: { summary: "End all of a member's Claude Code sign-ins", tag: 'claude-code' },
  revokeOneDevice: { summary: "End one of a member's Claude Code sign-ins", tag: 'claude-code' },
  listOrgWorkspaces: { summary: "The organization's workspaces", tag: 'workspaces' },
  showOneWorkspace: { summary: 'One workspace with its balance', tag: 'workspaces' },
  creditWorkspace: { summary: 'Add credits to the balance', tag: 'workspaces', body: credit },
  createWorkspaceTeam: { summary: 'Create a team', tag: 'teams', status: 201, body: newTeam },
  listWorkspaceKeysAcrossTeams: { summary: "The workspace's keys across teams, or one team's", tag: 'keys', query: keysQuery },
  listWorkspaceTeams: { summary: "The workspace's teams", tag: 'teams' },
  showOneTeam: { summary: 'One team', tag: 'teams' },
  listMembersOfTeam: { summary: "The team's members", tag: 'teams' },
  addMemberToTeam: { summary: 'Add a member to the team', tag: 'teams', status: 204, body: newMember },
  removeMemberFromTeam: { summary: 'Remove a member from the team', tag: 'teams', status: 204 },
  listCatalog: { summary: 'The models file: every alias with its prices', tag: 'models' },
  showModelDeployments: {
    summary: "Each alias's deployments and the state the proxies report for each (healthy, cooling, circuit open, half-open); owners and admins",
    tag: 'models',
  },
  showModelAccess: { summary: 'The aliases the team may call', tag: 'models' },
  replaceModelAccess: { summary: 'Replace the aliases the team may call', tag: 'models', body: modelAccess },
  createTeamKey: { summary: 'Create an API key (its secret is shown once)', tag: 'keys', status: 201, body: newKey },
  listTeamKeys: { summary: "The team's keys (never their secrets)", tag: 'keys' },
  revokeOneKey: { summary: 'Revoke a key', tag: 'keys', status: 204 },
  changeKey: { summary: "Change a key's name, budget and its period, limits or expiry", tag: 'keys', body: keyPatch },
  rotateOneKey: {
    summary: 'A new secret for the key (shown once); the old one works until its grace ends',
    tag: 'keys',
    status: 201,
    body: rotateBody,
  },
  showKeySettings: { summary: 'Whether members may change their own personal keys', tag: 'keys' },
  updateKeySettings: { summary: 'Let members change their own personal keys, or not', tag: 'keys', body: keySettingsBody },
  showScimSettings: { summary: 'SCIM provisioning: enabled, and whether a token exists', tag: 'scim settings' },
  updateScimSettings: { summary: 'Turn SCIM provisioning on or off', tag: 'scim settings', body: SettingsBody },
  generateScimToken: { summary: 'Generate the SCIM bearer token (shown once; replaces the old one)', tag: 'scim settings', status: 201 },
  showSsoSettings: { summary: "The organization's OIDC settings (never the client secret)", tag: 'sso settings' },
  saveSso: { summary: 'Save the OIDC settings', tag: 'sso settings', body: ssoSettingsBody },
  removeSso: { summary: 'Remove the OIDC settings', tag: 'sso settings', status: 204 },
  showUsage: {
    summary: "The workspace's usage by day or hour, grouped by model, key, team or user (JSON or CSV)",
    tag: 'usage',
    query: summaryQuery,
  },
  listUsageRequests: { summary: "The workspace's requests, newest first, paged (JSON or CSV)", tag: 'usage', query: requestsQuery },
  showAlerts: { summary: 'Money alerts: the balance threshold and the webhooks (never their secrets)', tag: 'alerts' },
  setAlerts: { summary: 'Set or clear the balance threshold', tag: 'alerts', body: alertSettingsBody },
  addWebhook: { summary: 'Add an alert webhook (its signing secret is shown once)', tag: 'alerts', status: 201, body: newWebhookBody },
  removeWebhook: { summary: 'Remove an alert webhook and its pending deliveries', tag: 'alerts', status: 204 },
  listEvents: { summary: 'Alert events, newest first, with each delivery’s status', tag: 'alerts', query: alertEventsQuery },
  showOpenApi: { summary: 'This document', tag: 'meta' },
};

/** The name of the middleware that asks for a console session (see http/auth.ts). */
const SESSION_MIDDLEWARE = 'authenticateSession';

export interface RouteInfo {
  method: string;
  path: string;
  handler: string;
  session: boolean;
}

/** Every route the routers register, read off their layers (HEAD, which Koa adds to GET, left out). */
export function routesOf(routers: Router[]): RouteInfo[] {
  return routers.flatMap((router) =>
    router.stack.flatMap((layer) => {
      const names = layer.stack.map((fn) => fn.name);
      return layer.methods
        .filter((m) => m !== 'HEAD')
        .map((method) => ({
          method: method.toLowerCase(),
          path: String(layer.path),
          handler: names[names.length - 1] ?? '',
          session: names.includes(SESSION_MIDDLEWARE),
        }));
    }),
  );
}

const jsonSchema = (schema: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
};

const PROBLEM = {
  description: 'An error as application/problem+json',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

/** The OpenAPI 3.1 document of the console API served by `routers`. */
export function openApiDocument(routers: Router[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routesOf(routers)) {
    const notes = OPERATIONS[route.handler];
    if (!notes) throw new Error(`console route ${route.method.toUpperCase()} ${route.path} (${route.handler}) has no OpenAPI notes`);
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (notes.query) {
      for (const [name, schema] of Object.entries(notes.query.shape)) {
        parameters.push({ name, in: 'query', required: false, schema: jsonSchema(schema as z.ZodType) as { type: string } });
      }
    }
    const status = String(notes.status ?? 200);
    const success =
      status === '200' || status === '201' ? { description: 'OK', content: { 'application/json': { schema: {} } } } : { description: 'Done' };
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.handler,
      summary: notes.summary,
      tags: [notes.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(notes.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(notes.body) } } } } : {}),
      ...(route.session ? { security: [{ consoleToken: [] }, { sessionCookie: [] }] } : {}),
      responses: { [status]: success, default: PROBLEM },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tollgate console API',
      version: '1',
      description: 'The control plane’s console API (what the web console uses). Errors are application/problem+json.',
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: {
        consoleToken: { type: 'http', scheme: 'bearer', description: 'A console token (from bootstrap) or a session token' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'tollgate_session' },
      },
      schemas: {
        Problem: {
          type: 'object',
          properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' } },
          required: ['title', 'status'],
        },
      },
    },
  };
}

/** `GET /v1/openapi.json`: the document of the routers it is given (itself included), built once. */
export function openApiRoutes(routers: () => Router[], config: { publicBaseUrl: string }): Router {
  const router = new Router();
  let document: string | undefined;
  router.get('/v1/openapi.json', async function showOpenApi(ctx: Context) {
    document ??= JSON.stringify(openApiDocument([...routers(), router], config.publicBaseUrl));
    ctx.type = 'application/json';
    ctx.body = document;
  });
  return router;
}
