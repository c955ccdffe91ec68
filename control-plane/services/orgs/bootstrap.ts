import { conflict, invalidInput, isUniqueViolation } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { audit_insert } from '../../stores/audit.js';
import { membership_insert } from '../../stores/memberships.js';
import { org_find_by_slug, org_insert } from '../../stores/orgs.js';
import { user_insert } from '../../stores/users.js';
import { workspace_find_by_slug, workspace_insert } from '../../stores/workspaces.js';
import { openSession } from '../auth/sessions.js';

export interface BootstrapInput {
  slug: string;
  name: string;
  ownerEmail: string;
  /** "Given Family": the last word is the family name, the rest the given name. */
  ownerName?: string;
}

export interface BootstrapResult {
  org_id: string;
  org_slug: string;
  workspace_id: string;
  workspace_slug: string;
  owner_user_id: string;
  console_token: string;
  /** When the console token stops working (SESSION_TTL_SECONDS after bootstrap); `console-token` issues another. */
  expires_at: string;
}

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

export function validateBootstrap(input: BootstrapInput): string[] {
  const problems: string[] = [];
  if (!SLUG_PATTERN.test(input.slug)) problems.push('--org must be 1-63 lowercase letters, digits or dashes');
  if (!input.name.trim()) problems.push('--name must not be empty');
  if (!EMAIL_PATTERN.test(input.ownerEmail)) problems.push('--owner must be an email address');
  if (input.ownerName !== undefined && (!input.ownerName.trim() || input.ownerName.length > 200 || /\p{Cc}/u.test(input.ownerName))) {
    problems.push('--owner-name must be 1-200 characters with no control characters');
  }
  return problems;
}

export function isEmail(value: string): boolean {
  return EMAIL_PATTERN.test(value);
}

/** Splits "Given Family" for SCIM's name.givenName / name.familyName; one word is a given name only. */
export function splitPersonName(full: string | undefined): { given_name: string | null; family_name: string | null; display_name: string | null } {
  const words = (full ?? '').trim().split(/\s+/).filter(Boolean);
  if (!words.length) return { given_name: null, family_name: null, display_name: null };
  if (words.length === 1) return { given_name: words[0]!, family_name: null, display_name: words[0]! };
  return { given_name: words.slice(0, -1).join(' '), family_name: words.at(-1)!, display_name: words.join(' ') };
}

/** Creates an organization, its default workspace (same slug) and its owner, in one transaction. */
export async function bootstrapOrg(deps: ControlPlaneDeps, input: BootstrapInput): Promise<BootstrapResult> {
  const problems = validateBootstrap(input);
  if (problems.length) throw invalidInput(problems.join('; '));
  const now = deps.clock.now();
  try {
    return await deps.db.transaction(async (tx) => {
      if (await org_find_by_slug(tx, input.slug)) {
        throw conflict(
          `An organization with slug "${input.slug}" already exists; nothing was changed. ` +
            `To sign in as its owner again, issue a new console token: npm run -s cli -- console-token --org ${input.slug} --owner <owner email>`,
        );
      }
      if (await workspace_find_by_slug(tx, input.slug)) throw conflict(`A workspace with slug "${input.slug}" already exists.`);
      const org = await org_insert(tx, { slug: input.slug, name: input.name.trim() });
      const workspace = await workspace_insert(tx, { org_id: org.id, slug: input.slug, name: input.name.trim() });
      const owner = await user_insert(
        tx,
        org.id,
        'bootstrap',
        {
          user_name: input.ownerEmail,
          external_id: null,
          ...splitPersonName(input.ownerName),
          emails: [{ value: input.ownerEmail, primary: true }],
          active: true,
        },
        now,
      );
      await membership_insert(tx, { org_id: org.id, user_id: owner.id, role: 'owner', status: 'active' });
      const session = await openSession(deps, tx, org.id, owner.id);
      await audit_insert(tx, {
        org_id: org.id,
        actor: 'system',
        action: 'org.bootstrap',
        target_type: 'org',
        target_id: org.id,
        detail: { slug: org.slug, workspace_id: workspace.id, owner_user_id: owner.id },
        now,
      });
      return {
        org_id: org.id,
        org_slug: org.slug,
        workspace_id: workspace.id,
        workspace_slug: workspace.slug,
        owner_user_id: owner.id,
        console_token: session.token,
        expires_at: session.expires_at.toISOString(),
      };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`The slug "${input.slug}" is taken.`);
    throw err;
  }
}
