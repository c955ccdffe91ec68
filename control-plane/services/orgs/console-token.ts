import { AppError, invalidInput, notFound } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import type { Queryable } from '../../db/database.js';
import type { Org, Role, User } from '../../domain.js';
import { audit_insert } from '../../stores/audit.js';
import { membership_find } from '../../stores/memberships.js';
import { org_find_by_slug } from '../../stores/orgs.js';
import { user_find_by_user_name } from '../../stores/users.js';
import { isEmail, SLUG_PATTERN } from './bootstrap.js';
import { openSession } from '../auth/sessions.js';

export interface ConsoleTokenInput {
  slug: string;
  ownerEmail: string;
}

export interface ConsoleTokenResult {
  org_id: string;
  org_slug: string;
  user_id: string;
  console_token: string;
  expires_at: string;
}

export function validateConsoleToken(input: ConsoleTokenInput): string[] {
  const problems: string[] = [];
  if (!SLUG_PATTERN.test(input.slug)) problems.push('--org must be 1-63 lowercase letters, digits or dashes');
  if (!isEmail(input.ownerEmail)) problems.push('--owner must be an email address');
  return problems;
}

/**
 * The active owner or admin of an existing org that a CLI command acts as
 * (whoever runs the CLI against the store is as trusted as bootstrap).
 */
export async function findOperator(q: Queryable, input: ConsoleTokenInput): Promise<{ org: Org; user: User; role: Role }> {
  const org = await org_find_by_slug(q, input.slug);
  if (!org) throw notFound(`Organization "${input.slug}"`);
  const user = await user_find_by_user_name(q, org.id, input.ownerEmail);
  const membership = user ? await membership_find(q, org.id, user.id) : undefined;
  if (!user || !membership) throw new AppError('not_found', `Organization "${input.slug}" has no member "${input.ownerEmail}".`);
  if (membership.role === 'member') throw invalidInput(`${input.ownerEmail} is a member of "${input.slug}", not an owner or admin.`);
  if (membership.status !== 'active' || !user.active) throw invalidInput(`${input.ownerEmail} is deprovisioned in "${input.slug}".`);
  return { org, user, role: membership.role };
}

/**
 * A new console token for an active owner or admin of an existing org: the
 * way back in for an operator without SSO who lost the bootstrap token. Only
 * whoever can run the CLI against the store can ask, so it is as trusted as
 * bootstrap; it writes an audit row so the org sees it happened.
 */
export async function issueConsoleToken(deps: ControlPlaneDeps, input: ConsoleTokenInput): Promise<ConsoleTokenResult> {
  const problems = validateConsoleToken(input);
  if (problems.length) throw invalidInput(problems.join('; '));
  return deps.db.transaction(async (tx) => {
    const { org, user } = await findOperator(tx, input);
    const session = await openSession(deps, tx, org.id, user.id);
    await audit_insert(tx, {
      org_id: org.id,
      actor: 'system',
      action: 'session.issue',
      target_type: 'user',
      target_id: user.id,
      detail: { user_name: user.user_name, via: 'cli' },
      now: deps.clock.now(),
    });
    return { org_id: org.id, org_slug: org.slug, user_id: user.id, console_token: session.token, expires_at: session.expires_at.toISOString() };
  });
}
