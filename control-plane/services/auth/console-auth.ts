import { forbidden, notFound } from '../../../shared/errors.js';
import type { Role } from '../../domain.js';

/** The caller of a console route, once authenticated: who, in which org, with which role. */
export interface ConsoleAuth {
  sessionId: string;
  userId: string;
  orgId: string;
  role: Role;
  email: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Path ids are checked before they reach SQL: a malformed one is simply an
 * id that names nothing (404), not a uuid cast error (500). Ids compare in
 * lower case, the way the store writes them.
 */
export function normalizeId(raw: string | undefined, what: string): string {
  if (!raw || !UUID.test(raw)) throw notFound(what);
  return raw.toLowerCase();
}

/**
 * The one org check: whatever names an org (a path parameter, a row's
 * org_id) must name the caller's. Another organization's ids answer 404,
 * never 403, so their existence is not disclosed.
 */
export function assertInOrg(auth: ConsoleAuth, rawOrgId: string | undefined, what: string): string {
  const orgId = normalizeId(rawOrgId, what);
  if (orgId !== auth.orgId) throw notFound(what);
  return orgId;
}

/** `/v1/orgs/{org_id}/…`: only the caller's own org exists for them. */
export function assertOwnOrg(auth: ConsoleAuth, rawOrgId: string | undefined): string {
  return assertInOrg(auth, rawOrgId, 'Organization');
}

export function isAdmin(auth: ConsoleAuth): boolean {
  return auth.role === 'owner' || auth.role === 'admin';
}

export function assertAdmin(auth: ConsoleAuth): void {
  if (!isAdmin(auth)) throw forbidden('This action needs the owner or admin role.');
}

/** Settings pages of `/v1/orgs/{org_id}/…`: the caller's own org, as its owner or admin. */
export function assertOrgAdmin(auth: ConsoleAuth, rawOrgId: string | undefined): string {
  const orgId = assertOwnOrg(auth, rawOrgId);
  assertAdmin(auth);
  return orgId;
}

/** The caller's own org, as its owner: `why` says what makes the action the owner's alone. */
export function assertOrgOwner(auth: ConsoleAuth, rawOrgId: string | undefined, why: string): string {
  const orgId = assertOwnOrg(auth, rawOrgId);
  if (auth.role !== 'owner') throw forbidden(`This action needs the owner role: ${why}`);
  return orgId;
}

/** How the console caller is named in the audit log. */
export function actorOf(auth: ConsoleAuth): string {
  return `user:${auth.userId}`;
}
