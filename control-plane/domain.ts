import type { BudgetPeriod } from '../shared/budget-period.js';
/** Domain rows as the services see them (money as JS numbers in USD). */
export type Role = 'owner' | 'admin' | 'member';
export type MembershipStatus = 'active' | 'inactive';
export type UserSource = 'scim' | 'sso' | 'bootstrap';
export type KeyKind = 'personal' | 'team';

export interface Org {
  id: string;
  slug: string;
  name: string;
  scim_enabled: boolean;
  /** Members may PATCH their own personal keys (docs/keys.md); off by default. */
  members_edit_own_keys: boolean;
  created_at: Date;
}

export interface Email {
  value: string;
  type?: string;
  primary?: boolean;
}

export interface User {
  id: string;
  org_id: string;
  user_name: string;
  external_id: string | null;
  given_name: string | null;
  family_name: string | null;
  /** SCIM name.formatted as the client sent it; null = derive from the parts. */
  name_formatted: string | null;
  display_name: string | null;
  emails: Email[];
  active: boolean;
  source: UserSource;
  created_at: Date;
  updated_at: Date;
}

export interface Membership {
  org_id: string;
  user_id: string;
  role: Role;
  status: MembershipStatus;
}

export interface ConsoleSession {
  id: string;
  org_id: string;
  user_id: string;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface ScimToken {
  id: string;
  org_id: string;
  prefix: string;
  created_at: Date;
}

export interface SsoSettings {
  org_id: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string;
  external_id_claim: string;
  updated_at: Date;
}

export interface Workspace {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  balance_usd: number;
}

export interface Team {
  id: string;
  org_id: string;
  workspace_id: string;
  name: string;
}

export interface ApiKey {
  id: string;
  org_id: string;
  workspace_id: string;
  team_id: string;
  kind: KeyKind;
  owner_user_id: string | null;
  name: string;
  prefix: string;
  last4: string;
  budget_usd: number | null;
  /** null: budget_usd is a lifetime total; else it is per UTC period (docs/keys.md). */
  budget_period: BudgetPeriod | null;
  /** The spend of the period starting at period_started_at (zero once a later period has begun). */
  period_spend_usd: number;
  period_started_at: Date | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: Date | null;
  spend_usd: number;
  /** When the secret rotated out last works (null: no rotation in grace, or none ever). */
  previous_expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

/** Who did something, as written to the audit log: `user:<id>`, `scim`, `system`, `proxy`. */
export type Actor = string;
