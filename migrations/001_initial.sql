-- Tollgate initial schema. Append-only: change the schema in a new file.
-- Money is numeric(20,9) USD; ids are uuid; times are timestamptz.

CREATE TABLE orgs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  scim_enabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A user belongs to one organization: SCIM identities are per organization.
CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  user_name text NOT NULL,
  external_id text,
  given_name text,
  family_name text,
  display_name text,
  emails jsonb NOT NULL DEFAULT '[]'::jsonb,
  active boolean NOT NULL DEFAULT true,
  source text NOT NULL CHECK (source IN ('scim', 'sso', 'bootstrap')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_org_user_name_key ON users (org_id, lower(user_name));
CREATE INDEX users_org_external_id_idx ON users (org_id, external_id);

CREATE TABLE memberships (
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  status text NOT NULL CHECK (status IN ('active', 'inactive')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);

-- Opaque bearer tokens; only the SHA-256 of the token is stored.
CREATE TABLE console_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash text NOT NULL UNIQUE,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX console_sessions_user_idx ON console_sessions (user_id);

CREATE TABLE scim_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
-- Spec 2.2: one active provisioning token per organization.
CREATE UNIQUE INDEX scim_tokens_one_active_key ON scim_tokens (org_id) WHERE revoked_at IS NULL;

-- OIDC settings; the client secret is sealed (AES-256-GCM), never stored in plaintext.
CREATE TABLE sso_settings (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  issuer text NOT NULL,
  client_id text NOT NULL,
  client_secret_sealed text NOT NULL,
  external_id_claim text NOT NULL DEFAULT 'sub',
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The slug is global: it is the first path segment of the edge URLs.
CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  -- Always equal to the sum of the workspace's ledger entries; kept here
  -- so the balance check is one row read, updated in the same transaction.
  balance_usd numeric(20, 9) NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workspaces_org_idx ON workspaces (org_id);

-- Credits are positive, usage is negative; request_id makes settlement idempotent.
CREATE TABLE ledger_entries (
  id bigserial PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('credit', 'usage')),
  amount_usd numeric(20, 9) NOT NULL,
  key_id uuid,
  request_id text,
  model text,
  input_tokens integer,
  output_tokens integer,
  actor_user_id uuid,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ledger_entries_request_id_key ON ledger_entries (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX ledger_entries_workspace_idx ON ledger_entries (workspace_id, created_at);

CREATE TABLE teams (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX teams_workspace_name_key ON teams (workspace_id, lower(name));

CREATE TABLE team_members (
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, user_id)
);

CREATE TABLE team_models (
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  alias text NOT NULL,
  PRIMARY KEY (team_id, alias)
);

-- owner_user_id has no foreign key on purpose: deleting a user over SCIM
-- must not touch the keys that user created (spec 2.3, 5).
CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('personal', 'team')),
  owner_user_id uuid,
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  last4 text NOT NULL,
  budget_usd numeric(20, 9),
  rpm integer,
  tpm integer,
  expires_at timestamptz,
  spend_usd numeric(20, 9) NOT NULL DEFAULT 0,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'personal') = (owner_user_id IS NOT NULL))
);
CREATE INDEX api_keys_team_idx ON api_keys (team_id);
CREATE INDEX api_keys_owner_idx ON api_keys (owner_user_id);

-- One row per change, written in the change's transaction. No foreign keys:
-- the trail outlives what it describes.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  org_id uuid NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_org_idx ON audit_log (org_id, created_at);

-- Bumped on every change the proxy's key cache must hear about; the proxy
-- polls it as the backstop behind push invalidation.
CREATE TABLE change_feed (
  id bigserial PRIMARY KEY,
  topic text NOT NULL,
  subject_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
