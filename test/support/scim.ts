import { call, seedOrg, type TestControlPlane } from './control-plane.js';
import type { BootstrapResult } from '../../control-plane/services/orgs/bootstrap.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimAnswer = Awaited<ReturnType<typeof call>>;

export interface ScimOrg {
  org: BootstrapResult;
  token: string;
  /** `{base_url}/v1/scim/v2/orgs/<org_id>` */
  base: string;
  /** A request as a connector sends it: bearer token, `application/scim+json` body. */
  scim(method: string, path: string, body?: unknown, init?: { token?: string; headers?: Record<string, string> }): Promise<ScimAnswer>;
}

/** A fresh org with SCIM enabled and a provisioning token, set up through the console API. */
export async function seedScimOrg(cp: TestControlPlane, bootstrapped?: BootstrapResult): Promise<ScimOrg> {
  const org = bootstrapped ?? (await seedOrg(cp.deps));
  const settings = `${cp.url}/v1/orgs/${org.org_id}/scim`;
  const enabled = await call(settings, { method: 'PUT', token: org.console_token, body: { enabled: true } });
  if (enabled.status !== 200) throw new Error(`enabling SCIM answered ${enabled.status}`);
  const generated = await call(`${settings}/token`, { method: 'POST', token: org.console_token });
  if (generated.status !== 201) throw new Error(`generating the token answered ${generated.status}`);
  const token = generated.body.token as string;
  const base = `${cp.url}/v1/scim/v2/orgs/${org.org_id}`;
  return {
    org,
    token,
    base,
    scim: (method, path, body, init = {}) =>
      call(`${base}${path}`, {
        method,
        token: init.token ?? token,
        body,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...init.headers },
      }),
  };
}

export function userBody(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ value: userName.includes('@') ? userName : `${userName}@example.test`, type: 'work', primary: true }],
    active: true,
    ...extra,
  };
}

export function patchBody(...operations: Record<string, unknown>[]): Record<string, unknown> {
  return { schemas: [PATCH_OP], Operations: operations };
}

/** PATCH paths worth trying: every supported form, ignored attributes, read-only ones and malformed ones. */
export const PATCH_PATH_SAMPLES = [
  'active',
  'ACTIVE',
  'externalId',
  'displayName',
  'userName',
  'name',
  'name.givenName',
  'name.familyName',
  'name.formatted',
  'name.middleName',
  'emails',
  'emails[type eq "work"]',
  'emails[type eq "work"].value',
  'emails[type eq "home"]',
  'emails[type eq "home"].primary',
  'emails[value eq "a@b.test"].type',
  'emails[value eq "x@y"].primary',
  'emails[primary eq true].value',
  'emails[primary eq true].type',
  'emails[primary eq false]',
  'emails.value',
  'emails[type eq work]',
  'title',
  'roles',
  'groups',
  'id',
  'meta',
  'schemas',
  'urn:ietf:params:scim:schemas:core:2.0:User:active',
  'urn:ietf:params:scim:schemas:core:2.0:User:displayName',
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value',
  'urn:x:y',
  'a.b.c',
  'emails[',
  ']',
  '',
];
